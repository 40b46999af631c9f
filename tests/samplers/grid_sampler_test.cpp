#include "samplers/grid_sampler.hpp"

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cleansweep {
namespace {

Result<std::unique_ptr<Sampler>> Grid(const std::string& space, std::uint64_t seed = 1) {
  Result<StudyConfig> config = LoadConfigText("study: {name: t}\nsampler: {kind: grid, seed: " + std::to_string(seed) +
                                                  "}\ntrial: {command: [p]}\nspace:\n" + space,
                                              "g.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return MakeSampler(*config);
}

std::set<std::string> Drain(Sampler& sampler, TrialHistory* history) {
  std::set<std::string> seen;
  for (std::int64_t i = 0;; ++i) {
    std::optional<ParamSet> p = sampler.Ask(i, *history);
    if (!p) break;
    EXPECT_TRUE(seen.insert(ToJson(*p).dump()).second) << "repeated " << ToJson(*p).dump();
    history->running[i] = *p;
  }
  return seen;
}

TEST(GridSampler, EnumeratesEveryCombinationOnce) {
  Result<std::unique_ptr<Sampler>> sampler = Grid(R"(  a: {type: categorical, choices: [x, y, z]}
  n: {type: int, low: 1, high: 4}
  lr: {type: float, low: 0.001, high: 0.1, log: true, grid_points: 3}
  v: {type: float, low: 0.0, high: 1.0, grid: [0.25, 0.75]}
)");
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  EXPECT_EQ(*(*sampler)->Capacity(), 3 * 4 * 3 * 2);
  TrialHistory history;
  const std::set<std::string> seen = Drain(**sampler, &history);
  EXPECT_EQ(seen.size(), 72u);
  EXPECT_TRUE(seen.count(R"({"a":"z","lr":0.01,"n":4,"v":0.75})")) << *seen.begin();
}

TEST(GridSampler, InactiveParametersDoNotMultiplyTheGrid) {
  Result<std::unique_ptr<Sampler>> sampler = Grid(R"(  opt: {type: categorical, choices: [sgd, adam]}
  m: {type: float, low: 0.0, high: 0.9, grid: [0.0, 0.5, 0.9], when: {opt: sgd}}
)");
  ASSERT_TRUE(sampler.ok());
  EXPECT_EQ(*(*sampler)->Capacity(), 4);  // sgd x 3 momenta + adam alone
}

TEST(GridSampler, SkipsPointsAlreadyRun) {
  Result<std::unique_ptr<Sampler>> sampler = Grid("  a: {type: categorical, choices: [1, 2, 3]}\n");
  TrialHistory history;
  TrialRecord done;
  done.params = {{"a", std::int64_t{2}}};
  history.finished.push_back(done);
  const std::set<std::string> seen = Drain(**sampler, &history);
  EXPECT_EQ(seen, (std::set<std::string>{R"({"a":1})", R"({"a":3})"}));
}

TEST(GridSampler, ShuffledBySeedButComplete) {
  const char* space = "  n: {type: int, low: 1, high: 50}\n";
  TrialHistory h1, h2;
  Result<std::unique_ptr<Sampler>> s1 = Grid(space, 1), s2 = Grid(space, 2);
  const auto first1 = (*s1)->Ask(0, h1), first2 = (*s2)->Ask(0, h2);
  EXPECT_NE(ToJson(*first1).dump(), ToJson(*first2).dump());
}

TEST(GridSampler, ContinuousParametersNeedGridValues) {
  Result<std::unique_ptr<Sampler>> sampler = Grid("  lr: {type: float, low: 0.001, high: 0.1}\n");
  ASSERT_FALSE(sampler.ok());
  EXPECT_EQ(sampler.status().message(),
            "g.yaml:5: space.lr: the grid sampler needs `grid: [...]` or `grid_points: N` for a float parameter");
}

}  // namespace
}  // namespace cleansweep
