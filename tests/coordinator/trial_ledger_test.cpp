// The ledger decides, for results as they arrive and for a resumed study's rows alike, what is
// final, what runs again and what the sampler learns from.
#include "coordinator/trial_ledger.hpp"

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

StudyConfig Config(const std::string& trial) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: l, direction: minimize}\nsampler: {kind: random}\ntrial: " + trial +
                         "\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n",
                     "l.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

TrialRecord Ended(std::int64_t number, TrialState state, std::optional<double> value = std::nullopt) {
  TrialRecord r;
  r.number = number;
  r.state = state;
  r.value = value;
  r.params["x"] = 0.5;
  r.output_tail = "the trial's last lines";
  return r;
}

TEST(TrialLedger, ARetryOnFailureRunsAgainUntilItsRetriesAreUsedUp) {
  const StudyConfig config = Config("{command: [sh], retries: 2, retry_on: [crash]}");
  TrialHistory history;
  TrialLedger ledger(config, &history);
  TrialLedger::Settled first = ledger.Settle(Ended(0, TrialState::kCrash), 0);
  EXPECT_EQ(first.fate, TrialLedger::Fate::kRetry);
  EXPECT_EQ(first.failures, 1);
  ASSERT_TRUE(ledger.HasRerun());
  const TrialLedger::Rerun rerun = ledger.TakeRerun();
  EXPECT_EQ(rerun.of, 0);
  EXPECT_EQ(rerun.attempt, 2);
  EXPECT_EQ(rerun.failures, 1);
  EXPECT_EQ(rerun.params.at("x"), ParamValue(0.5));
  EXPECT_EQ(ledger.finished(), 0) << "a trial due a retry is not final";
  EXPECT_EQ(ledger.Settle(Ended(1, TrialState::kCrash), 1).fate, TrialLedger::Fate::kRetry);
  ledger.TakeRerun();
  const TrialLedger::Settled last = ledger.Settle(Ended(2, TrialState::kCrash), 2);
  EXPECT_EQ(last.fate, TrialLedger::Fate::kFinal);
  EXPECT_EQ(last.failures, 3);
  EXPECT_FALSE(ledger.HasRerun());
  EXPECT_EQ(ledger.finished(), 1);
  // Every failed attempt is evidence for the sampler, without its output.
  ASSERT_EQ(history.finished.size(), 3u);
  for (const TrialRecord& r : history.finished) EXPECT_TRUE(r.output_tail.empty());
}

TEST(TrialLedger, AnInterruptedTrialRunsAgainAndIsNeitherFinalNorEvidence) {
  const StudyConfig config = Config("{command: [sh]}");
  TrialHistory history;
  TrialLedger ledger(config, &history);
  EXPECT_EQ(ledger.Settle(Ended(4, TrialState::kInterrupted), 0).fate, TrialLedger::Fate::kInterrupted);
  EXPECT_EQ(ledger.rerun_count(), 1);
  EXPECT_EQ(ledger.TakeRerun().of, 4);
  EXPECT_EQ(ledger.finished(), 0);
  EXPECT_TRUE(history.finished.empty());
  // A resumed study whose file already holds the next attempt queues nothing.
  EXPECT_EQ(ledger.Settle(Ended(5, TrialState::kInterrupted), 0, /*queue_rerun=*/false).fate,
            TrialLedger::Fate::kInterrupted);
  EXPECT_FALSE(ledger.HasRerun());
}

TEST(TrialLedger, CountsFinalOutcomesAndKeepsTheBestInTheStudysDirection) {
  const StudyConfig config = Config("{command: [sh], retry_on: [timeout]}");  // no retries: final at once
  TrialHistory history;
  TrialLedger ledger(config, &history);
  ledger.Settle(Ended(0, TrialState::kComplete, 0.4), 0);
  ledger.Settle(Ended(1, TrialState::kComplete, 0.2), 0);
  ledger.Settle(Ended(2, TrialState::kComplete, 0.3), 0);
  ledger.Settle(Ended(3, TrialState::kPruned, 0.9), 0);
  ledger.Settle(Ended(4, TrialState::kTimeout), 0);
  EXPECT_EQ(ledger.finished(), 5);
  EXPECT_EQ(ledger.complete(), 3);
  EXPECT_EQ(ledger.pruned(), 1);
  ASSERT_TRUE(ledger.best());
  EXPECT_EQ(ledger.best()->number, 1) << "minimize: the lowest value";
  EXPECT_FALSE(ledger.HasRerun());
  EXPECT_EQ(history.finished.size(), 5u);
}

}  // namespace
}  // namespace cleansweep
