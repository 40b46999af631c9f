#include "samplers/nsga2_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "samplers/random_sampler.hpp"

namespace cleansweep {
namespace {

StudyConfig Config(const std::string& sampler, const std::string& space, std::uint64_t seed = 1) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: mo, metrics: [{name: f1, direction: minimize}, {name: f2, direction: minimize}]}\n"
      "sampler: {kind: " +
          sampler + ", seed: " + std::to_string(seed) + "}\ntrial: {command: [x]}\nspace:\n" + space,
      "mo.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

std::string UnitSpace(int variables) {
  std::string space;
  for (int i = 0; i < variables; ++i) space += "  x" + std::to_string(i) + ": {type: float, low: 0.0, high: 1.0}\n";
  return space;
}

// ZDT1: a convex front f2 = 1 - sqrt(f1) where x1.. are 0.
std::vector<double> Zdt1(const ParamSet& p, int variables) {
  double sum = 0;
  for (int i = 1; i < variables; ++i) sum += AsNumber(p.at("x" + std::to_string(i)));
  const double g = 1 + 9 * sum / (variables - 1);
  const double f1 = AsNumber(p.at("x0"));
  return {f1, g * (1 - std::sqrt(f1 / g))};
}

TrialRecord Complete(std::int64_t number, ParamSet params, std::vector<double> values) {
  TrialRecord r;
  r.number = number;
  r.state = TrialState::kComplete;
  r.params = std::move(params);
  r.value = values.front();
  r.values = std::move(values);
  return r;
}

double RunHypervolume(const std::string& sampler_kind, std::uint64_t seed, int trials, int variables) {
  const StudyConfig config = Config(sampler_kind, UnitSpace(variables), seed);
  std::unique_ptr<Sampler> sampler = MakeSampler(config).value();
  TrialHistory history;
  std::vector<Point> points;
  for (int i = 0; i < trials; ++i) {
    const ParamSet params = *sampler->Ask(i, history);
    std::vector<double> values = Zdt1(params, variables);
    points.push_back(values);
    history.finished.push_back(Complete(i, params, std::move(values)));
  }
  return Hypervolume(points, {1.1, 11});
}

TEST(Nsga2Sampler, FindsABetterFrontThanRandomSearchOnZdt1) {
  std::vector<double> nsga2, random;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    nsga2.push_back(RunHypervolume("nsga2", seed, 300, 10));
    random.push_back(RunHypervolume("random", seed, 300, 10));
  }
  std::sort(nsga2.begin(), nsga2.end());
  std::sort(random.begin(), random.end());
  // Median over seeds: evolution must beat independent draws clearly, not by noise.
  EXPECT_GT(nsga2[2], random[2] + 0.3) << "nsga2 " << nsga2[2] << ", random " << random[2];
}

// Multi-objective TPE shares the problem and the measure (tpe_sampler.cpp splits by fronts).
TEST(MultiObjectiveTpe, FindsABetterFrontThanRandomSearchOnZdt1) {
  std::vector<double> tpe, random;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    tpe.push_back(RunHypervolume("tpe", seed, 150, 10));
    random.push_back(RunHypervolume("random", seed, 150, 10));
  }
  std::sort(tpe.begin(), tpe.end());
  std::sort(random.begin(), random.end());
  EXPECT_GT(tpe[2], random[2] + 0.3) << "tpe " << tpe[2] << ", random " << random[2];
}

TEST(Nsga2Sampler, DrawsAtRandomUntilAPopulationHasCompletedThenBreedsFromIt) {
  const StudyConfig config = Config("nsga2", UnitSpace(3));
  Nsga2Sampler sampler(
      config.space,
      [&] {
        SamplerOptions o = config.sampler;
        o.population_size = 4;
        return o;
      }(),
      config.study.metrics);
  RandomSampler random(config.space, config.sampler.seed);
  TrialHistory history;
  for (int i = 0; i < 4; ++i) {
    const ParamSet p = *sampler.Ask(i, history);
    EXPECT_EQ(p, *random.Ask(i, history)) << "trial " << i << " is a start-up trial, drawn as the random sampler does";
    history.finished.push_back(Complete(i, p, {double(i), double(3 - i)}));
  }
  EXPECT_NE(*sampler.Ask(4, history), *random.Ask(4, history)) << "bred once population_size trials completed";
  EXPECT_EQ(sampler.population_size(), 4u);
  // A failed trial is no parent, however good the values it carries.
  TrialRecord failed = Complete(5, {{"x0", 0.1}, {"x1", 0.1}, {"x2", 0.1}}, {-1, -1});
  failed.state = TrialState::kFail;
  history.finished.push_back(failed);
  sampler.Ask(6, history);
  std::vector<std::int64_t> parents = sampler.Parents(history);
  std::sort(parents.begin(), parents.end());
  EXPECT_EQ(parents, (std::vector<std::int64_t>{0, 1, 2, 3}));
}

TEST(Nsga2Sampler, KeepsTheWholeFrontWhenItFitsTheElitistPopulation) {
  const StudyConfig config = Config("nsga2", UnitSpace(1));
  SamplerOptions options = config.sampler;
  options.population_size = 3;
  options.crossover_prob = 0;      // children are copies of a parent...
  options.mutation_prob = 1e-300;  // ...left as they are
  Nsga2Sampler sampler(config.space, options, config.study.metrics);
  TrialHistory history;
  // The front is trials 1, 3 and 4; trials 0 and 2 are dominated. A population of three keeps the front.
  const std::vector<std::vector<double>> values = {{2, 2}, {0, 3}, {3, 3}, {1, 1}, {3, 0}};
  for (size_t i = 0; i < values.size(); ++i) {
    history.finished.push_back(Complete(static_cast<std::int64_t>(i), {{"x0", 0.1 * double(i)}}, values[i]));
  }
  sampler.Ask(5, history);
  std::vector<std::int64_t> parents = sampler.Parents(history);
  std::sort(parents.begin(), parents.end());
  EXPECT_EQ(parents, (std::vector<std::int64_t>{1, 3, 4}));
  // A child that would copy a parent is mutated instead: no finished configuration runs twice.
  std::set<double> seen;
  for (const TrialRecord& r : history.finished) seen.insert(AsNumber(r.params.at("x0")));
  for (int n = 5; n < 65; ++n) {
    EXPECT_EQ(seen.count(AsNumber(sampler.Ask(n, history)->at("x0"))), 0u) << "trial " << n;
  }
}

// A child that copies its parent in a discrete space: the mutation forced on it used to draw a
// category's current choice again, or round an integer back to its value.
TEST(Nsga2Sampler, NeverCopiesAParentInADiscreteSpace) {
  const StudyConfig config =
      Config("nsga2", "  opt: {type: categorical, choices: [a, b, c]}\n  n: {type: int, low: 1, high: 3}\n");
  SamplerOptions options = config.sampler;
  options.population_size = 2;
  options.mutation_prob = 1e-300;  // only the forced mutation changes anything
  Nsga2Sampler sampler(config.space, options, config.study.metrics);
  const ParamSet parent = {{"opt", std::string("b")}, {"n", std::int64_t{2}}};
  TrialHistory history;
  history.finished = {Complete(0, parent, {1, 2}), Complete(1, parent, {2, 1})};
  std::set<ParamSet> children;
  for (int n = 2; n < 102; ++n) {
    const ParamSet child = *sampler.Ask(n, history);
    EXPECT_NE(child, parent) << "trial " << n << " copies its parents";
    children.insert(child);
  }
  EXPECT_GE(children.size(), 2u) << "the forced mutation reaches both other categories";
}

TEST(Nsga2Sampler, ChildrenAreValidInMixedAndConditionalSpaces) {
  const std::string space =
      "  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n"
      "  layers: {type: int, low: 1, high: 8}\n"
      "  width: {type: int, low: 16, high: 256, step: 16}\n"
      "  optimizer: {type: categorical, choices: [sgd, adam]}\n"
      "  momentum: {type: float, low: 0.0, high: 0.99, when: {optimizer: [sgd]}}\n"
      "  beta2: {type: float, low: 0.9, high: 0.999, when: {optimizer: [adam]}}\n"
      "  epochs: 3\n";
  const StudyConfig config = Config("nsga2", space);
  SamplerOptions options = config.sampler;
  options.population_size = 8;
  options.mutation_prob = 0.5;  // exercise mutation of every kind often
  Nsga2Sampler sampler(config.space, options, config.study.metrics);
  TrialHistory history;
  for (int i = 0; i < 200; ++i) {
    const ParamSet p = *sampler.Ask(i, history);
    const double lr = AsNumber(p.at("lr"));
    EXPECT_GE(lr, 1e-5);
    EXPECT_LE(lr, 1.0);
    ASSERT_TRUE(std::holds_alternative<std::int64_t>(p.at("layers")));
    const auto width = std::get<std::int64_t>(p.at("width"));
    EXPECT_EQ(width % 16, 0);
    EXPECT_GE(width, 16);
    EXPECT_LE(width, 256);
    const std::string optimizer = std::get<std::string>(p.at("optimizer"));
    EXPECT_EQ(p.count("momentum"), optimizer == "sgd" ? 1u : 0u) << "trial " << i;
    EXPECT_EQ(p.count("beta2"), optimizer == "adam" ? 1u : 0u) << "trial " << i;
    EXPECT_EQ(AsNumber(p.at("epochs")), 3);
    history.finished.push_back(
        Complete(i, p, {std::log10(lr) * std::log10(lr), double(std::get<std::int64_t>(p.at("layers")))}));
  }
}

TEST(Nsga2Sampler, TrialNDependsOnlyOnTheSeedAndWhatFinished) {
  const StudyConfig config = Config("nsga2", UnitSpace(4));
  SamplerOptions options = config.sampler;
  options.population_size = 5;
  Nsga2Sampler a(config.space, options, config.study.metrics);
  TrialHistory history;
  for (int i = 0; i < 30; ++i) {
    const ParamSet p = *a.Ask(i, history);
    history.finished.push_back(Complete(i, p, Zdt1(p, 4)));
  }
  Nsga2Sampler b(config.space, options, config.study.metrics);  // a resumed study's fresh sampler
  EXPECT_EQ(*a.Ask(30, history), *b.Ask(30, history));
}

TEST(Nsga2Sampler, ParentsPreferFeasibleTrialsThenTheLeastViolation) {
  const StudyConfig config = Config("nsga2", UnitSpace(1));
  SamplerOptions options = config.sampler;
  options.population_size = 3;
  Nsga2Sampler sampler(config.space, options, config.study.metrics);
  TrialHistory history;
  // Trials 0 and 1 dominate everything but break a constraint (1 by less); 2, 3 and 4 are feasible.
  const std::vector<std::vector<double>> values = {{0, 0}, {0, 0}, {5, 5}, {6, 6}, {4, 7}};
  const std::vector<double> violation = {2, 1, 0, 0, 0};
  for (size_t i = 0; i < values.size(); ++i) {
    TrialRecord r = Complete(static_cast<std::int64_t>(i), {{"x0", 0.1 * double(i)}}, values[i]);
    r.violation = violation[i];
    history.finished.push_back(r);
  }
  sampler.Ask(5, history);
  std::vector<std::int64_t> parents = sampler.Parents(history);
  std::sort(parents.begin(), parents.end());
  EXPECT_EQ(parents, (std::vector<std::int64_t>{2, 3, 4})) << "every feasible trial before any infeasible one";
  SamplerOptions four = options;
  four.population_size = 4;
  Nsga2Sampler wider(config.space, four, config.study.metrics);
  wider.Ask(5, history);
  parents = wider.Parents(history);
  std::sort(parents.begin(), parents.end());
  EXPECT_EQ(parents, (std::vector<std::int64_t>{1, 2, 3, 4})) << "then the smaller violation";
}

}  // namespace
}  // namespace cleansweep
