// One trial, one outcome: a gang's process results made into the trial's record.
#include "coordinator/gang_outcome.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

TrialRecord Process(int worker, TrialState state, double end, std::int64_t rss_kb, double gpu_mb) {
  TrialRecord r;
  r.number = 5;
  r.state = state;
  r.worker = worker;
  r.host = "node" + std::to_string(worker / 4);
  r.gpu = std::to_string(worker % 4);
  r.start_time = 100;
  r.end_time = end;
  r.peak_rss_kb = r.peak_rss_max_kb = rss_kb;
  r.gpu_mem_peak_mb = r.gpu_mem_peak_max_mb = gpu_mb;
  r.cpu_seconds = 10;
  r.reason = state == TrialState::kComplete ? "" : "reason of worker " + std::to_string(worker);
  r.output_tail = "output of worker " + std::to_string(worker);
  if (worker == 4) r.value = 0.9;  // rank 0's
  return r;
}

TEST(MergeGang, AllCompleteIsRankZerosRecordWithTheGangsSumsAndPeaks) {
  const std::vector<int> ranks = {4, 5, 6, 7};
  std::map<int, TrialRecord> ended;
  for (const int w : ranks) ended[w] = Process(w, TrialState::kComplete, 200 + w, 1000 * w, 100.0 * w);
  ended[5].gpu_mem_peak_mb = ended[5].gpu_mem_peak_max_mb = std::nan("");  // a process NVML did not see
  const TrialRecord whole = MergeGang(ranks, ended);
  EXPECT_EQ(whole.state, TrialState::kComplete);
  EXPECT_EQ(whole.value, 0.9);
  EXPECT_EQ(whole.worker, 4);
  EXPECT_EQ(whole.gpus, 4);
  EXPECT_EQ(whole.workers, "4-7");
  EXPECT_EQ(whole.gpu, "0,1,2,3");
  EXPECT_EQ(whole.end_time, 207);
  EXPECT_EQ(whole.peak_rss_kb, 22000);
  EXPECT_EQ(whole.peak_rss_max_kb, 7000);
  EXPECT_DOUBLE_EQ(whole.gpu_mem_peak_mb, 1700);
  EXPECT_DOUBLE_EQ(whole.gpu_mem_peak_max_mb, 700);
  EXPECT_DOUBLE_EQ(whole.cpu_seconds, 40);
  EXPECT_EQ(whole.output_tail, "output of worker 4");
}

TEST(MergeGang, TheProcessThatFailedFirstNamesTheTrialsStateNotTheOnesItTookDown) {
  const std::vector<int> ranks = {4, 5, 6, 7};
  std::map<int, TrialRecord> ended;
  ended[4] = Process(4, TrialState::kFail, 150, 1, 1);  // rank 0 lost its peer: an error, later
  ended[5] = Process(5, TrialState::kInterrupted, 151, 1, 1);
  ended[6] = Process(6, TrialState::kCrash, 140, 1, 1);  // the cause
  ended[6].signal = 11;
  ended[7] = Process(7, TrialState::kInterrupted, 152, 1, 1);  // stopped by the coordinator
  const TrialRecord whole = MergeGang(ranks, ended);
  EXPECT_EQ(whole.state, TrialState::kCrash);
  EXPECT_EQ(whole.signal, 11);
  EXPECT_EQ(whole.reason, "rank 2 of 4 (worker 6 on node1) failed first: reason of worker 6");
  EXPECT_EQ(whole.output_tail, "output of worker 6");
  EXPECT_EQ(whole.value, 0.9);  // rank 0's, as it stood
}

TEST(MergeGang, WhatFailsAfterRankZeroCompletedDoesNotUndoTheTrial) {
  const std::vector<int> ranks = {4, 5};
  std::map<int, TrialRecord> ended;
  ended[4] = Process(4, TrialState::kComplete, 150, 1, 1);
  ended[5] = Process(5, TrialState::kCrash, 155, 1, 1);  // died in its teardown
  EXPECT_EQ(MergeGang(ranks, ended).state, TrialState::kComplete);
  ended[5].end_time = 149;  // died while rank 0 still trained
  EXPECT_EQ(MergeGang(ranks, ended).state, TrialState::kCrash);
  ended[5].state = TrialState::kPruned;  // pruned with the rest: not a failure
  EXPECT_EQ(MergeGang(ranks, ended).state, TrialState::kComplete);
}

TEST(FormatRanks, JoinsRuns) {
  EXPECT_EQ(FormatRanks({1, 2, 3, 4, 9}), "1-4,9");
  EXPECT_EQ(FormatRanks({7}), "7");
  EXPECT_EQ(FormatRanks({3, 5, 6}), "3,5-6");
}

}  // namespace
}  // namespace cleansweep
