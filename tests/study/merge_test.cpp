#include "study/merge.hpp"

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

const char* kYaml =
    "study: {name: m, n_trials: 10}\nsampler: {kind: random, seed: 1}\ntrial: {command: [sh]}\n"
    "space:\n  x: {type: float, low: 0.0, high: 1.0}\n";

StudyData Shard(int k, int n, std::vector<std::string> sets = {}) {
  sets.push_back("study.shard=" + std::to_string(k) + "/" + std::to_string(n));
  Result<StudyConfig> config = LoadConfigText(kYaml, "m.yaml", sets);
  EXPECT_TRUE(config.ok()) << config.status().message();
  StudyData data;
  data.config = *config;
  data.path = config->study.storage;
  return data;
}

TrialRecord Trial(std::int64_t number, double start, TrialState state = TrialState::kComplete) {
  TrialRecord r;
  r.number = number;
  r.start_time = start;
  r.end_time = start + 1;
  r.state = state;
  r.value = start;
  r.params = {{"x", start / 100}};
  return r;
}

std::string MergeError(const std::vector<StudyData>& shards, bool allow_missing = false) {
  Result<MergedStudy> merged = MergeShards(shards, "out.h5", allow_missing);
  EXPECT_FALSE(merged.ok());
  return merged.ok() ? "" : merged.status().message();
}

TEST(Merge, RenumbersByStartTimeAndCarriesRetriesAndCurvesAlong) {
  StudyData a = Shard(0, 2), b = Shard(1, 2);
  a.trials = {Trial(0, 10, TrialState::kCrash), Trial(1, 30), Trial(2, 31)};
  a.trials[2].retry_of = 0;  // shard a's trial 2 re-runs its crashed trial 0
  a.intermediate = {{1, 0, 0.5, 30.5, {}}};
  b.trials = {Trial(0, 20), Trial(1, 40)};
  b.intermediate = {{0, 0, 0.1, 20.5, {}}, {0, 1, 0.2, 20.7, {}}, {1, 0, 0.9, 40.5, {}}};
  Result<MergedStudy> merged = MergeShards({b, a}, "out.h5", false);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_EQ(merged->trials.size(), 5u);
  std::vector<double> starts;
  for (size_t i = 0; i < merged->trials.size(); ++i) {
    EXPECT_EQ(merged->trials[i].number, static_cast<std::int64_t>(i));
    starts.push_back(merged->trials[i].start_time);
  }
  EXPECT_EQ(starts, (std::vector<double>{10, 20, 30, 31, 40}));
  EXPECT_EQ(merged->trials[3].retry_of, 0);  // still points at the crashed trial, now number 0
  ASSERT_EQ(merged->intermediate.size(), 4u);
  EXPECT_EQ(merged->intermediate[0].trial, 1);  // b's trial 0 is trial 1 now
  EXPECT_EQ(merged->intermediate[1].trial, 1);
  EXPECT_EQ(merged->intermediate[2].trial, 2);  // a's trial 1
  EXPECT_EQ(merged->intermediate[3].trial, 4);  // b's trial 1
  EXPECT_FALSE(merged->config.study.shard.sharded());
  EXPECT_EQ(merged->config.study.storage, "out.h5");
  EXPECT_EQ(merged->config.study.n_trials, 10);
  EXPECT_EQ(merged->merged_from,
            "0/2 results/m-shard-0-of-2.h5 (3 trials)\n1/2 results/m-shard-1-of-2.h5 (2 trials)\n");
}

TEST(Merge, RefusesShardsOfDifferentSweepsAndNamesEachProblem) {
  const std::string message =
      MergeError({Shard(0, 3), Shard(1, 3, {"sampler.seed=2"}), Shard(2, 3, {"space.x.high=2.0"})});
  EXPECT_NE(message.find("m-shard-1-of-3.h5: sampler.seed is 2, but results/m-shard-0-of-3.h5 has 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("m-shard-2-of-3.h5: differs from results/m-shard-0-of-3.h5: param x: was float [0.0, 1.0]"),
            std::string::npos)
      << message;
  EXPECT_NE(MergeError({Shard(0, 2), Shard(1, 3)}).find("shard count is 3, but"), std::string::npos);
  EXPECT_NE(MergeError({Shard(0, 2), Shard(0, 2)}).find("shard 0/2 again"), std::string::npos);
  StudyData plain = Shard(0, 1);
  EXPECT_NE(MergeError({plain}).find("not a shard"), std::string::npos);
}

TEST(Merge, RefusesRunningTrialsAndMissingShardsUnlessAllowed) {
  StudyData a = Shard(0, 3), b = Shard(2, 3);
  EXPECT_NE(MergeError({a, b}).find("shards 1 of 3 are missing"), std::string::npos);
  EXPECT_TRUE(MergeShards({a, b}, "out.h5", /*allow_missing=*/true).ok());
  b.trials = {Trial(0, 1), Trial(1, 2, TrialState::kRunning)};
  const std::string message = MergeError({a, b}, true);
  EXPECT_NE(message.find("m-shard-2-of-3.h5: 1 trials are still RUNNING"), std::string::npos) << message;
  EXPECT_NE(message.find("cleansweep resume results/m-shard-2-of-3.h5"), std::string::npos) << message;
}

}  // namespace
}  // namespace cleansweep
