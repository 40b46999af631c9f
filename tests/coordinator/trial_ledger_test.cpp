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

TrialRecord WithValues(std::int64_t number, std::vector<double> values) {
  TrialRecord r = Ended(number, TrialState::kComplete, values.front());
  r.values = std::move(values);
  return r;
}

std::vector<std::int64_t> Numbers(const std::vector<TrialRecord>& records) {
  std::vector<std::int64_t> out;
  for (const TrialRecord& r : records) out.push_back(r.number);
  return out;
}

TEST(TrialLedger, AMultiMetricStudyKeepsItsParetoFrontAndSaysWhichRowsChanged) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: mo, metrics: [{name: acc, direction: maximize}, {name: ms, direction: minimize}]}\n"
      "sampler: {kind: random}\ntrial: {command: [sh]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n",
      "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  TrialHistory history;
  TrialLedger ledger(*config, &history);
  ledger.Settle(WithValues(0, {0.8, 20}), 0);
  ledger.Settle(WithValues(1, {0.9, 30}), 0);  // a trade-off: both on the front
  std::vector<TrialRecord> changes = ledger.TakeFrontChanges();
  EXPECT_EQ(Numbers(changes), (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(changes[0].pareto && changes[1].pareto);
  EXPECT_EQ(changes[0].output_tail, "the trial's last lines") << "a row is rewritten whole";
  EXPECT_EQ(ledger.since_best(), 0);
  ledger.Settle(WithValues(2, {0.7, 25}), 0);  // dominated by trial 0
  EXPECT_TRUE(ledger.TakeFrontChanges().empty());
  EXPECT_EQ(ledger.since_best(), 1);
  ledger.Settle(WithValues(3, {0.8, 20}), 0);  // equal to trial 0: on the front, but no improvement
  EXPECT_EQ(Numbers(ledger.TakeFrontChanges()), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(ledger.since_best(), 2);
  ledger.Settle(WithValues(4, {0.95, 15}), 0);  // dominates everything so far
  changes = ledger.TakeFrontChanges();
  EXPECT_EQ(Numbers(changes), (std::vector<std::int64_t>{0, 1, 3, 4}));
  EXPECT_FALSE(changes[0].pareto || changes[1].pareto || changes[2].pareto);
  EXPECT_TRUE(changes[3].pareto);
  EXPECT_EQ(Numbers(ledger.pareto_front()), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(ledger.since_best(), 0);
  EXPECT_FALSE(ledger.best()) << "several metrics have a front, not a best";
  EXPECT_EQ(ledger.complete(), 5);
  // A resumed row stored as on the front that no longer is gets rewritten too.
  TrialRecord stale = WithValues(5, {0.5, 50});
  stale.pareto = true;
  ledger.Settle(stale, 0);
  changes = ledger.TakeFrontChanges();
  ASSERT_EQ(Numbers(changes), (std::vector<std::int64_t>{5}));
  EXPECT_FALSE(changes[0].pareto);
}

TEST(TrialLedger, TrialsOutsideTheConstraintsAreNeitherBestNorOnTheFront) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: mo, metrics: [{name: acc, direction: maximize}, {name: ms, direction: minimize}], "
      "constraints: {ms: {max: 20}}}\nsampler: {kind: random}\ntrial: {command: [sh]}\nspace:\n"
      "  x: {type: float, low: 0.0, high: 1.0}\n",
      "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  TrialHistory history;
  TrialLedger ledger(*config, &history);
  TrialRecord fast = WithValues(0, {0.8, 10});
  fast.violation = config->study.Violation(fast);
  TrialRecord slow = WithValues(1, {0.99, 30});  // would dominate nothing, but is far better in acc
  slow.violation = config->study.Violation(slow);
  ASSERT_TRUE(slow.infeasible());
  ledger.Settle(fast, 0);
  ledger.Settle(slow, 0);
  EXPECT_EQ(Numbers(ledger.pareto_front()), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(ledger.complete(), 2);
  EXPECT_EQ(ledger.infeasible(), 1);
  EXPECT_EQ(ledger.since_best(), 1) << "an infeasible trial is no improvement";
  // One metric: the best is the best feasible trial.
  const StudyConfig single = Config("{command: [sh]}");
  StudyConfig bounded = single;
  bounded.study.constraints = {{"value", std::nullopt, 0.5}};
  TrialHistory h;
  TrialLedger one(bounded, &h);
  TrialRecord low = Ended(0, TrialState::kComplete, 0.4);
  low.violation = bounded.study.Violation(low);
  TrialRecord lower = Ended(1, TrialState::kComplete, 0.1);
  lower.violation = bounded.study.Violation(lower);
  TrialRecord too_high = Ended(2, TrialState::kComplete, 0.7);
  too_high.violation = bounded.study.Violation(too_high);
  one.Settle(low, 0);
  one.Settle(too_high, 0);
  one.Settle(lower, 0);
  ASSERT_TRUE(one.best());
  EXPECT_EQ(one.best()->number, 1);
}

}  // namespace
}  // namespace cleansweep
