#include "report/importance.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "util/random.hpp"

namespace cleansweep {
namespace {

StudyConfig Space(const std::string& params) {
  Result<StudyConfig> config = LoadConfigText("study: {name: i}\ntrial: {command: [sh]}\nspace:\n" + params, "i.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

// Trials with random parameters and value f(params).
template <class F>
std::vector<TrialRecord> Sample(const StudyConfig& config, int n, F f) {
  std::vector<TrialRecord> trials;
  SplitMix64 rng(5);
  for (int i = 0; i < n; ++i) {
    TrialRecord r;
    r.number = i;
    r.state = TrialState::kComplete;
    for (const ParamSpec& spec : config.space.params()) {
      if (spec.kind == ParamKind::kCategorical) {
        r.params[spec.name] = spec.choices[rng.Below(spec.choices.size())];
      } else if (spec.log) {
        r.params[spec.name] = std::exp(std::log(spec.low) + rng.Uniform() * (std::log(spec.high) - std::log(spec.low)));
      } else {
        r.params[spec.name] = spec.low + rng.Uniform() * (spec.high - spec.low);
      }
    }
    r.value = f(r.params);
    trials.push_back(r);
  }
  return trials;
}

double Of(const ImportanceResult& result, const std::string& name) {
  for (const ParamImportance& p : result.params) {
    if (p.name == name) return p.importance;
  }
  ADD_FAILURE() << "no importance for " << name;
  return -1;
}

TEST(FanovaImportance, RanksParametersByTheVarianceTheyExplain) {
  const StudyConfig config = Space(
      "  strong: {type: float, low: 0.0, high: 1.0}\n  weak: {type: float, low: 0.0, high: 1.0}\n"
      "  noise: {type: float, low: 0.0, high: 1.0}\n  lr: {type: float, low: 1.0e-4, high: 1.0, log: true}\n");
  // Variances over the space: strong 4^2/12 = 1.33, lr (linear in log10) 1/12 = 0.083, weak
  // 0.5^2/12 = 0.021, noise 0: the shares are about 0.93, 0.06, 0.015 and 0.
  const auto trials = Sample(config, 300, [](const ParamSet& p) {
    return 4 * AsNumber(p.at("strong")) + 0.5 * AsNumber(p.at("weak")) + 0.25 * (std::log10(AsNumber(p.at("lr"))) + 4);
  });
  const ImportanceResult result = FanovaImportance(config, trials);
  ASSERT_EQ(result.params.size(), 4u) << result.note;
  EXPECT_EQ(result.params[0].name, "strong");
  EXPECT_EQ(result.params[1].name, "lr");
  EXPECT_EQ(result.params[2].name, "weak");
  EXPECT_EQ(result.params[3].name, "noise");
  EXPECT_GT(Of(result, "strong"), 0.8);
  EXPECT_LT(Of(result, "noise"), 0.02);
  double sum = 0;
  for (const ParamImportance& p : result.params) sum += p.importance;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_EQ(result.trials_used, 300);
}

TEST(FanovaImportance, HandlesCategoricalsAndSkipsConditionalAndFixedOnes) {
  const StudyConfig config = Space(
      "  opt: {type: categorical, choices: [sgd, adam, adamw]}\n  x: {type: float, low: 0.0, high: 1.0}\n"
      "  momentum: {type: float, low: 0.0, high: 1.0, when: {opt: sgd}}\n  epochs: 3\n");
  auto trials = Sample(config, 200, [](const ParamSet& p) {
    return (std::get<std::string>(p.at("opt")) == "adam" ? 1.0 : 0.0) + 0.05 * AsNumber(p.at("x"));
  });
  for (TrialRecord& r : trials) {
    if (std::get<std::string>(r.params.at("opt")) != "sgd") r.params.erase("momentum");
  }
  const ImportanceResult result = FanovaImportance(config, trials);
  ASSERT_EQ(result.params.size(), 2u) << result.note;
  EXPECT_EQ(result.params[0].name, "opt");
  EXPECT_GT(Of(result, "opt"), 0.9);
  EXPECT_EQ(result.skipped,
            (std::vector<std::string>{"momentum: conditional (inactive in some trials)", "epochs: fixed"}));
}

TEST(FanovaImportance, SaysWhyWhenItCannotTell) {
  const StudyConfig config = Space("  x: {type: float, low: 0.0, high: 1.0}\n");
  auto trials = Sample(config, 3, [](const ParamSet& p) { return AsNumber(p.at("x")); });
  EXPECT_TRUE(FanovaImportance(config, trials).params.empty());
  EXPECT_EQ(FanovaImportance(config, trials).note, "needs at least 4 completed trials (has 3)");
  trials = Sample(config, 20, [](const ParamSet&) { return 1.0; });
  EXPECT_EQ(FanovaImportance(config, trials).note, "the objective does not vary with the parameters");
  trials[0].state = TrialState::kFail;  // failed trials are not fitted
  EXPECT_EQ(FanovaImportance(config, trials).trials_used, 19);
}

}  // namespace
}  // namespace cleansweep
