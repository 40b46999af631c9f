#include "transport/messages.hpp"

#include <gtest/gtest.h>

#include "transport/in_process_transport.hpp"

namespace cleansweep {
namespace {

template <typename T>
T RoundTrip(const T& message) {
  const Message m = message;
  Result<Message> back = Decode(static_cast<int>(TagOf(m)), Encode(m));
  EXPECT_TRUE(back.ok()) << back.status().message();
  return std::get<T>(*back);
}

TEST(Messages, EveryTypeRoundTrips) {
  EXPECT_EQ(RoundTrip(HelloMsg{"node7"}).host, "node7");
  const SetupMsg setup = RoundTrip(SetupMsg{"study: {}", "/r/x.trials"});
  EXPECT_EQ(setup.config_yaml, "study: {}");
  EXPECT_EQ(setup.trials_root, "/r/x.trials");
  const ReadyMsg ready =
      RoundTrip(ReadyMsg{false, "no program", "3", "process groups", "SLURM_STEP_GPUS=3", "idle", "node7", 29501});
  EXPECT_FALSE(ready.ok);
  EXPECT_EQ(ready.error, "no program");
  EXPECT_EQ(ready.gpu, "3");
  EXPECT_EQ(ready.isolation, "process groups");
  EXPECT_EQ(ready.gpu_source, "SLURM_STEP_GPUS=3");
  EXPECT_EQ(ready.gpu_note, "idle");
  EXPECT_EQ(ready.address, "node7");
  EXPECT_EQ(ready.port, 29501);
  const StopMsg stop = RoundTrip(StopMsg{"SIGUSR1 received", 2500, true});
  EXPECT_EQ(stop.reason, "SIGUSR1 received");
  EXPECT_EQ(stop.grace_ms, 2500);
  EXPECT_TRUE(stop.immediate);
  GangPlace place;
  place.size = 8;
  place.rank = 5;
  place.local_rank = 1;
  place.local_size = 4;
  place.group_rank = 1;
  place.groups = 2;
  place.master_addr = "node3";
  place.master_port = 40123;
  const AssignMsg assign = RoundTrip(AssignMsg{
      42, {{"b", true}, {"i", std::int64_t{-7}}, {"f", 0.125}, {"s", std::string("adam")}}, 2, -1, -1, place});
  EXPECT_EQ(assign.gang.size, 8);
  EXPECT_EQ(assign.gang.rank, 5);
  EXPECT_EQ(assign.gang.local_rank, 1);
  EXPECT_EQ(assign.gang.local_size, 4);
  EXPECT_EQ(assign.gang.group_rank, 1);
  EXPECT_EQ(assign.gang.groups, 2);
  EXPECT_EQ(assign.gang.master_addr, "node3");
  EXPECT_EQ(assign.gang.master_port, 40123);
  const AbortMsg abort = RoundTrip(AbortMsg{42, "rank 2 of trial 42 ended CRASH", 1500});
  EXPECT_EQ(abort.number, 42);
  EXPECT_EQ(abort.reason, "rank 2 of trial 42 ended CRASH");
  EXPECT_EQ(abort.grace_ms, 1500);
  EXPECT_EQ(assign.number, 42);
  EXPECT_EQ(assign.params.at("b"), ParamValue(true));
  EXPECT_EQ(assign.params.at("i"), ParamValue(std::int64_t{-7}));
  EXPECT_EQ(assign.params.at("f"), ParamValue(0.125));
  EXPECT_EQ(assign.params.at("s"), ParamValue(std::string("adam")));
  EXPECT_EQ(assign.attempt, 2);
  const StepMsg report = RoundTrip(StepMsg{{5, 3, 0.75, 12.5, {0.75, 20}}});
  EXPECT_EQ(report.value.trial, 5);
  EXPECT_EQ(report.value.step, 3);
  EXPECT_EQ(report.value.values, (std::vector<double>{0.75, 20}));
  TrialRecord r;
  r.number = 9;
  r.state = TrialState::kTimeout;
  r.value = 0.5;
  r.reason = "ran past";
  r.values = {0.5, 12.5};
  r.pareto = true;
  r.output_tail = std::string(10000, 'x');
  const ResultMsg result = RoundTrip(ResultMsg{r, "trial folder: Read-only file system"});
  EXPECT_EQ(result.worker_fault, "trial folder: Read-only file system");
  EXPECT_EQ(result.record.state, TrialState::kTimeout);
  EXPECT_EQ(*result.record.value, 0.5);
  EXPECT_EQ(result.record.output_tail.size(), 10000u);
  EXPECT_EQ(result.record.values, (std::vector<double>{0.5, 12.5}));
  EXPECT_TRUE(result.record.pareto);
  EXPECT_EQ(RoundTrip(StopMsg{"done"}).reason, "done");
}

TEST(Messages, CorruptPayloadsAreErrorsNotCrashes) {
  EXPECT_FALSE(Decode(static_cast<int>(Tag::kResult), "xy").ok());
  EXPECT_FALSE(Decode(99, "").ok());
}

TEST(InProcessTransport, DeliversInOrderWithTheSource) {
  InProcessHub hub(3);
  InProcessTransport a(&hub, 1), b(&hub, 0);
  ASSERT_TRUE(a.Send(0, HelloMsg{"one"}).ok());
  ASSERT_TRUE(a.Send(0, StopMsg{"two"}).ok());
  auto first = b.Receive(Millis(100));
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->source, 1);
  EXPECT_EQ(std::get<HelloMsg>((*first)->message).host, "one");
  auto second = b.Receive(Millis(100));
  EXPECT_EQ(std::get<StopMsg>((*second)->message).reason, "two");
  auto none = b.Receive(Millis(10));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace cleansweep
