#include "samplers/cmaes_sampler.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "util/random.hpp"

namespace cleansweep {
namespace {

StudyConfig Config(const std::string& sampler, const std::string& direction = "minimize") {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: c, direction: " + direction + "}\nsampler: " + sampler +
                         "\ntrial: {command: [x]}\nspace:\n"
                         "  x: {type: float, low: -5.0, high: 5.0}\n  y: {type: float, low: -5.0, high: 5.0}\n"
                         "  n: {type: int, low: 1, high: 10}\n  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n"
                         "  opt: {type: categorical, choices: [a, b, c]}\n",
                     "c.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

double Sphere(const ParamSet& p) {
  return std::pow(AsNumber(p.at("x")) - 1, 2) + std::pow(AsNumber(p.at("y")) + 2, 2) +
         std::pow(AsNumber(p.at("n")) - 4, 2) + std::pow(std::log10(AsNumber(p.at("lr"))) + 3, 2);
}

TrialHistory Optimize(Sampler& sampler, int trials, int batch, double sign = 1) {
  TrialHistory history;
  for (int i = 0; i < trials; i += batch) {  // `batch` workers ask before any of them reports
    std::vector<std::pair<std::int64_t, ParamSet>> asked;
    for (int j = i; j < i + batch; ++j) {
      asked.emplace_back(j, *sampler.Ask(j, history));
      history.running[j] = asked.back().second;
    }
    for (auto& [number, params] : asked) {
      history.running.erase(number);
      TrialRecord r;
      r.number = number;
      r.state = TrialState::kComplete;
      r.value = sign * Sphere(params);
      r.params = params;
      history.finished.push_back(r);
    }
  }
  return history;
}

TEST(CmaesSampler, ConvergesOnASphereWithParallelWorkers) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 1}")).value();
  const TrialHistory history = Optimize(*sampler, 400, 4);
  double best = 1e300;
  for (const TrialRecord& r : history.finished) best = std::min(best, *r.value);
  EXPECT_LT(best, 0.05);
  auto* cmaes = static_cast<CmaesSampler*>(sampler.get());
  EXPECT_GT(cmaes->generation(), 20);
  // The mean sits near the optimum in the unit cube: x = 1 -> 0.6, y = -2 -> 0.3.
  EXPECT_NEAR(cmaes->mean()[0], 0.6, 0.05);
  EXPECT_NEAR(cmaes->mean()[1], 0.3, 0.05);
}

TEST(CmaesSampler, MaximizeClimbs) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 2}", "maximize")).value();
  const TrialHistory history = Optimize(*sampler, 300, 1, -1);
  double best = -1e300;
  for (const TrialRecord& r : history.finished) best = std::max(best, *r.value);
  EXPECT_GT(best, -0.1);
}

TEST(CmaesSampler, SuggestionsAreValidAndCategoricalsCovered) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 3}")).value();
  const TrialHistory history = Optimize(*sampler, 120, 2);
  std::set<std::string> opts;
  for (const TrialRecord& r : history.finished) {
    const double x = std::get<double>(r.params.at("x")), lr = std::get<double>(r.params.at("lr"));
    const auto n = std::get<std::int64_t>(r.params.at("n"));
    EXPECT_TRUE(x >= -5 && x <= 5);
    EXPECT_TRUE(lr >= 1e-5 && lr <= 1);
    EXPECT_TRUE(n >= 1 && n <= 10);
    opts.insert(std::get<std::string>(r.params.at("opt")));
  }
  EXPECT_EQ(opts.size(), 3u);
}

TEST(CmaesSampler, SameSeedSameOrderSameSuggestions) {
  std::unique_ptr<Sampler> a = MakeSampler(Config("{kind: cmaes, seed: 5}")).value();
  std::unique_ptr<Sampler> b = MakeSampler(Config("{kind: cmaes, seed: 5}")).value();
  const TrialHistory ha = Optimize(*a, 60, 3), hb = Optimize(*b, 60, 3);
  for (size_t i = 0; i < ha.finished.size(); ++i) EXPECT_EQ(ha.finished[i].params, hb.finished[i].params);
}

TEST(CmaesSampler, FailuresRankLast) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 6, popsize: 4}")).value();
  TrialHistory history;
  // Generation 0: every trial with x > 0 "runs out of memory"; the mean must move to x < 0.
  for (int gen = 0; gen < 6; ++gen) {
    for (int j = 0; j < 4; ++j) {
      const int number = gen * 4 + j;
      TrialRecord r;
      r.number = number;
      r.params = *sampler->Ask(number, history);
      const bool oom = std::get<double>(r.params.at("x")) > 0;
      r.state = oom ? TrialState::kOomGpu : TrialState::kComplete;
      if (!oom) r.value = 0.0;
      history.finished.push_back(r);
    }
  }
  EXPECT_LT(static_cast<CmaesSampler*>(sampler.get())->mean()[0], 0.5);
}

// Trials of another shard or an earlier study (negative numbers) teach it before it asked any:
// the mean moves to where they were good.
TEST(CmaesSampler, LearnsFromTrialsItDidNotAsk) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 7}")).value();
  TrialHistory history;
  SplitMix64 rng(3);
  for (int i = 0; i < 60; ++i) {
    TrialRecord r;
    r.number = -5 - i;
    r.state = TrialState::kComplete;
    r.params = {{"x", ParamValue(-5 + 10 * rng.Uniform())},
                {"y", ParamValue(-5 + 10 * rng.Uniform())},
                {"n", ParamValue(static_cast<std::int64_t>(1 + rng.Below(10)))},
                {"lr", ParamValue(std::pow(10.0, -5 + 5 * rng.Uniform()))},
                {"opt", ParamValue(std::string("a"))}};
    r.value = Sphere(r.params);
    history.finished.push_back(r);
  }
  TrialRecord other_space;  // a trial without this space's numeric parameters: left out
  other_space.number = -1;
  other_space.state = TrialState::kComplete;
  other_space.params = {{"z", ParamValue(1.0)}};
  other_space.value = -100.0;
  history.finished.push_back(other_space);
  auto* cmaes = static_cast<CmaesSampler*>(sampler.get());
  ASSERT_TRUE(sampler->Ask(0, history).has_value());
  EXPECT_EQ(cmaes->injected(), 60);
  EXPECT_GE(cmaes->generation(), 5);  // 60 trials, lambda 8
  // x = 1 -> 0.6 and y = -2 -> 0.3 in the unit cube: from 0.5 towards the optimum.
  EXPECT_LT(std::abs(cmaes->mean()[0] - 0.6) + std::abs(cmaes->mean()[1] - 0.3), 0.2);
  // Alone, with the same seed, it is still where it started.
  std::unique_ptr<Sampler> alone = MakeSampler(Config("{kind: cmaes, seed: 7}")).value();
  ASSERT_TRUE(alone->Ask(0, TrialHistory{}).has_value());
  EXPECT_EQ(static_cast<CmaesSampler*>(alone.get())->generation(), 0);
}

// An injected point far from the distribution moves the mean no further than a draw could: eight
// foreign trials at one point in a corner of the space (a generation, lambda 8) move the mean
// from 0.5 along the step to that point, but only the step's clipped part: its whitened length
// (C = I, sigma 0.25) is cut to sqrt(4) + 8/6. Unclipped, the mean would land on the point.
TEST(CmaesSampler, AFarInjectedPointMovesTheMeanNoFurtherThanADraw) {
  std::unique_ptr<Sampler> sampler = MakeSampler(Config("{kind: cmaes, seed: 8}")).value();
  TrialHistory history;
  for (int i = 0; i < 8; ++i) {
    TrialRecord r;
    r.number = -1 - i;
    r.state = TrialState::kComplete;
    r.params = {{"x", ParamValue(-5.0)},
                {"y", ParamValue(-5.0)},
                {"n", ParamValue(std::int64_t{1})},
                {"lr", ParamValue(1e-5)},
                {"opt", ParamValue(std::string("a"))}};
    r.value = static_cast<double>(i);
    history.finished.push_back(r);
  }
  ASSERT_TRUE(sampler->Ask(0, history).has_value());
  auto* cmaes = static_cast<CmaesSampler*>(sampler.get());
  ASSERT_EQ(cmaes->generation(), 1);
  const std::vector<double>& m = cmaes->mean();  // x, y, n, lr; x, y and lr at 0 in the unit cube
  const double scale = (0.5 - m[0]) / 0.5;       // the part of the step kept: y_d = -2 there
  EXPECT_NEAR(m[1], m[0], 1e-12);
  EXPECT_NEAR(m[3], m[0], 1e-12);
  const double step_n = (m[2] - 0.5) / (0.25 * scale);  // n's unclipped step (its unit cell's centre)
  EXPECT_LT(scale, 0.95);
  EXPECT_NEAR(scale, (2 + 8.0 / 6) / std::sqrt(3 * 4 + step_n * step_n), 1e-9);
}

}  // namespace
}  // namespace cleansweep
