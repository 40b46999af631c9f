// Each pruner's decisions against cases computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <limits>
#include <thread>

#include "pruners/hyperband_pruner.hpp"
#include "pruners/median_pruner.hpp"
#include "pruners/pbt_pruner.hpp"
#include "pruners/successive_halving_pruner.hpp"

namespace cleansweep {
namespace {

TrialCurve Curve(std::map<std::int64_t, double> values, TrialState state = TrialState::kComplete) {
  return TrialCurve{std::move(values), state};
}

PrunerOptions Median(std::int64_t startup = 3, std::int64_t warmup = 0, std::int64_t interval = 1,
                     std::int64_t min_trials = 1) {
  PrunerOptions o;
  o.kind = "median";
  o.n_startup_trials = startup;
  o.n_warmup_steps = warmup;
  o.interval_steps = interval;
  o.n_min_trials = min_trials;
  return o;
}

TEST(MedianPruner, PrunesBelowTheMedianOfCompletedTrials) {
  MedianPruner p(Median(), Direction::kMaximize);
  Curves c = {{0, Curve({{1, 0.5}})},
              {1, Curve({{1, 0.6}})},
              {2, Curve({{1, 0.7}})},
              {3, Curve({{1, 0.55}}, TrialState::kRunning)}};
  const std::optional<std::string> reason = p.ShouldPrune(3, 1, c);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "pruned at step 1: best value 0.55 is worse than the median 0.6 of 3 completed trials");
  c[3].values[1] = 0.6;  // a tie with the median goes on
  EXPECT_FALSE(p.ShouldPrune(3, 1, c));
}

TEST(MedianPruner, MinimizeAndAnEvenCount) {
  MedianPruner p(Median(4), Direction::kMinimize);
  Curves c = {{0, Curve({{2, 0.2}})},
              {1, Curve({{2, 0.4}})},
              {2, Curve({{2, 0.6}})},
              {3, Curve({{2, 0.8}})},
              {4, Curve({{2, 0.51}}, TrialState::kRunning)}};
  EXPECT_TRUE(p.ShouldPrune(4, 2, c));  // median 0.5
  c[4].values[2] = 0.49;
  EXPECT_FALSE(p.ShouldPrune(4, 2, c));
}

TEST(MedianPruner, NoDecisionWithTooFewTrialsOrValues) {
  Curves c = {{0, Curve({{1, 0.5}})},
              {1, Curve({{1, 0.6}})},
              {2, Curve({{1, 0.7}}, TrialState::kPruned)},
              {3, Curve({{1, 0.1}, {5, 0.1}}, TrialState::kRunning)}};
  // Only two trials completed (the pruned one does not count) but three are needed.
  EXPECT_FALSE(MedianPruner(Median(3), Direction::kMaximize).ShouldPrune(3, 1, c));
  EXPECT_TRUE(MedianPruner(Median(2), Direction::kMaximize).ShouldPrune(3, 1, c));
  // Nobody reported step 5: nothing to compare with.
  EXPECT_FALSE(MedianPruner(Median(2), Direction::kMaximize).ShouldPrune(3, 5, c));
  // n_min_trials: two values at step 1 are not enough when three are required.
  EXPECT_FALSE(MedianPruner(Median(2, 0, 1, 3), Direction::kMaximize).ShouldPrune(3, 1, c));
}

TEST(MedianPruner, WarmupIntervalAndBestSoFar) {
  Curves c = {{0, Curve({{1, 0.5}, {2, 0.5}, {3, 0.5}})},
              {1, Curve({{1, 0.5}, {2, 0.5}, {3, 0.5}})},
              {2, Curve({{1, 0.1}, {2, 0.1}, {3, 0.1}}, TrialState::kRunning)}};
  EXPECT_FALSE(MedianPruner(Median(2, 2), Direction::kMaximize).ShouldPrune(2, 1, c));  // warming up
  EXPECT_TRUE(MedianPruner(Median(2, 2), Direction::kMaximize).ShouldPrune(2, 2, c));
  EXPECT_FALSE(MedianPruner(Median(2, 0, 2), Direction::kMaximize).ShouldPrune(2, 1, c));  // off the interval
  EXPECT_TRUE(MedianPruner(Median(2, 0, 2), Direction::kMaximize).ShouldPrune(2, 2, c));
  c[2].values[1] = 0.9;  // its best so far (0.9 at step 1) beats the median at step 3
  EXPECT_FALSE(MedianPruner(Median(2), Direction::kMaximize).ShouldPrune(2, 3, c));
}

PrunerOptions Asha(std::int64_t min_resource = 1, std::int64_t max_resource = 0, int eta = 3) {
  PrunerOptions o;
  o.kind = "asha";
  o.min_resource = min_resource;
  o.max_resource = max_resource;
  o.reduction_factor = eta;
  return o;
}

TEST(SuccessiveHalving, KeepsTheBestThirdAtEachRung) {
  SuccessiveHalvingPruner p(Asha(), Direction::kMaximize, 0);  // rungs at steps 1, 3, 9
  Curves c = {{0, Curve({{1, 0.9}}, TrialState::kRunning)}};
  EXPECT_FALSE(p.ShouldPrune(0, 1, c));  // alone at the rung: the best goes on
  c[1] = Curve({{1, 0.8}}, TrialState::kRunning);
  // Two at rung 0: 2 / 3 rounds to 0, at least the best goes on; 0.8 is not the best.
  ASSERT_TRUE(p.ShouldPrune(1, 1, c));
  EXPECT_EQ(*p.ShouldPrune(1, 1, c),
            "pruned at rung 0 (step 1): value 0.8 is not in the best 1 of 2 trials at that rung");
  c[2] = Curve({{1, 0.9}}, TrialState::kRunning);
  EXPECT_FALSE(p.ShouldPrune(2, 1, c));  // a tie with the threshold goes on
  for (int i = 3; i < 5; ++i) c[i] = Curve({{1, 0.85}}, TrialState::kComplete);
  c[5] = Curve({{1, 0.95}}, TrialState::kComplete);
  c[6] = Curve({{1, 0.9}}, TrialState::kRunning);
  // Seven at the rung keep the best 7 / 3 = 2: 0.95 and 0.9 (a tie counts as in).
  EXPECT_FALSE(p.ShouldPrune(6, 1, c));
  c[6].values[1] = 0.89;
  EXPECT_TRUE(p.ShouldPrune(6, 1, c));
}

TEST(SuccessiveHalving, DecidesEachRungOnceEvenWhenStepsAreSkipped) {
  SuccessiveHalvingPruner p(Asha(), Direction::kMinimize, 0);
  Curves c = {{0, Curve({{1, 0.1}, {3, 0.05}})}, {1, Curve({{1, 0.2}, {4, 0.3}}, TrialState::kRunning)}};
  // Trial 1 passed rung 0 earlier; its report at step 4 is its value for rung 1 (step 3).
  EXPECT_FALSE(p.ShouldPrune(1, 1, Curves{{0, Curve({{1, 0.1}})}, {1, Curve({{1, 0.1}}, TrialState::kRunning)}}));
  EXPECT_TRUE(p.ShouldPrune(1, 4, c));
  c[1].values[4] = 0.01;
  EXPECT_FALSE(p.ShouldPrune(1, 4, c));
  EXPECT_FALSE(p.ShouldPrune(1, 2, c));  // between rungs: no decision
}

TEST(SuccessiveHalving, MaxResourceAndEarlyStoppingRate) {
  Curves c = {{0, Curve({{3, 0.9}, {9, 0.9}})}, {1, Curve({{3, 0.1}, {9, 0.1}}, TrialState::kRunning)}};
  // max_resource 9: the rung at step 9 prunes nothing (the trial is done anyway).
  EXPECT_FALSE(SuccessiveHalvingPruner(Asha(1, 9), Direction::kMaximize, 0).ShouldPrune(1, 9, c));
  // min_early_stopping_rate 1: the first rung is at step 3.
  SuccessiveHalvingPruner late(Asha(), Direction::kMaximize, 1);
  EXPECT_FALSE(late.ShouldPrune(1, 1, Curves{{0, Curve({{1, 0.9}})}, {1, Curve({{1, 0.1}}, TrialState::kRunning)}}));
  EXPECT_TRUE(late.ShouldPrune(1, 3, c));
}

TEST(Hyperband, BracketsFollowHyperbandsBudgets) {
  PrunerOptions o = Asha(1, 27);
  o.kind = "hyperband";
  HyperbandPruner p(o, Direction::kMaximize);
  ASSERT_EQ(p.brackets(), 4);  // floor(log3(27)) + 1
  // Hyperband starts 27, 12, 6 and 4 configurations in brackets 0..3 (s = 3..0).
  std::vector<int> count(4, 0);
  for (int n = 0; n < 49000; ++n) ++count[static_cast<size_t>(p.BracketOf(n))];
  EXPECT_NEAR(count[0] / 49000.0, 27 / 49.0, 0.01);
  EXPECT_NEAR(count[3] / 49000.0, 4 / 49.0, 0.01);
  EXPECT_EQ(p.BracketOf(12345), p.BracketOf(12345));
}

TEST(Hyperband, TrialsCompeteOnlyWithinTheirBracket) {
  PrunerOptions o = Asha(1, 27);
  o.kind = "hyperband";
  HyperbandPruner p(o, Direction::kMaximize);
  std::int64_t a = 0, b = 1;
  while (p.BracketOf(a) != 0) ++a;
  b = a + 1;
  while (p.BracketOf(b) == 0) ++b;  // b sits in a later bracket, whose first rung is at step 3 or later
  std::int64_t a2 = a + 1;
  while (p.BracketOf(a2) != 0 || a2 == b) ++a2;
  Curves c = {{b, Curve({{1, 0.99}}, TrialState::kRunning)}, {a, Curve({{1, 0.1}}, TrialState::kRunning)}};
  EXPECT_FALSE(p.ShouldPrune(a, 1, c)) << "b's higher value is in another bracket";
  c[a2] = Curve({{1, 0.5}}, TrialState::kRunning);
  const std::optional<std::string> reason = p.ShouldPrune(a, 1, c);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("bracket 0: pruned at rung 0", 0), 0u) << *reason;
}

// Issue 17: pruner.resume. A trial not good enough at its rung pauses (the same decision, worded
// as a pause); a paused trial is promoted once enough trials reached its rung for it to be in the
// best 1/eta there, the highest rung first.
TEST(SuccessiveHalvingResume, PausesWhereItWouldPruneAndPromotesAsTheRungFills) {
  PrunerOptions o = Asha();  // eta 3: rungs at steps 1, 3, 9
  o.resume = true;
  SuccessiveHalvingPruner p(o, Direction::kMaximize, 0);
  EXPECT_TRUE(p.Pauses());
  EXPECT_FALSE(SuccessiveHalvingPruner(Asha(), Direction::kMaximize, 0).Pauses());
  Curves c = {{0, Curve({{1, 0.9}}, TrialState::kRunning)}, {1, Curve({{1, 0.8}}, TrialState::kRunning)}};
  EXPECT_FALSE(p.ShouldPrune(0, 1, c));
  const std::optional<std::string> reason = p.ShouldPrune(1, 1, c);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "paused at rung 0 (step 1): value 0.8 is not (yet) in the best 1 of 2 trials at that rung");
  c[1].state = TrialState::kPaused;
  EXPECT_FALSE(p.Promote(c)) << "the best 1 of 2 is trial 0";
  c[2] = Curve({{1, 0.5}}, TrialState::kPaused);
  c[3] = Curve({{1, 0.4}}, TrialState::kPruned);
  c[4] = Curve({{1, 0.3}}, TrialState::kRunning);
  c[5] = Curve({{1, 0.2}, {2, 0.25}}, TrialState::kPaused);  // ran a step past the rung before it stopped
  // Six at rung 0 keep the best 2: trial 0 went on at once, trial 1 (0.8) may now.
  std::optional<Promotion> next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 1);
  EXPECT_EQ(next->rung, 0);
  EXPECT_EQ(next->rung_step, 1);
  EXPECT_EQ(next->reason, "promoted at rung 0 (step 1): value 0.8 is now in the best 2 of 6 trials at that rung");
  c[1].state = TrialState::kRunning;
  EXPECT_FALSE(p.Promote(c)) << "0.5 is third of six";
  // A higher rung goes first: trial 6 paused at rung 1 (step 3), alone there, so in the best 1.
  c[6] = Curve({{1, 0.99}, {3, 0.7}}, TrialState::kPaused);
  for (int i = 7; i < 12; ++i) c[i] = Curve({{1, 0.1}}, TrialState::kPruned);  // rung 0 keeps 12 / 3 = 4
  next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 6) << "rung 1 before rung 0";
  EXPECT_EQ(next->rung, 1);
  // Trial 0 reaches rung 1 with more: two there keep the best 1, trial 0. Rung 0 now holds 12 and
  // keeps 4 (0.99, 0.9, 0.8, 0.5): trial 2 may go on.
  c[0].values[3] = 0.95;
  next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 2);
  EXPECT_EQ(next->rung, 0);
}

TEST(SuccessiveHalvingResume, AReportPastSeveralRungsIsJudgedAtTheHighest) {
  PrunerOptions o = Asha();
  o.resume = true;
  SuccessiveHalvingPruner p(o, Direction::kMinimize, 0);
  // Trial 1 reports every 4 steps: its step-4 report reaches rungs 0 and 1 (steps 1 and 3) at once.
  Curves c = {{0, Curve({{1, 0.5}, {3, 0.1}})}, {1, Curve({{4, 0.2}}, TrialState::kRunning)}};
  const std::optional<std::string> reason = p.ShouldPrune(1, 4, c);
  ASSERT_TRUE(reason);  // at rung 1 (0.2 against 0.1), not at rung 0 where it would be the best
  EXPECT_EQ(reason->rfind("paused at rung 1 (step 3)", 0), 0u) << *reason;
  c[1].state = TrialState::kPaused;
  c[2] = Curve({{1, 0.9}, {3, 0.3}});
  c[3] = Curve({{1, 0.9}, {3, 0.4}});
  const std::optional<Promotion> next = p.Promote(c);  // rung 1 holds 4 now: the best 1 is trial 0
  EXPECT_FALSE(next);
  c[4] = Curve({{1, 0.9}, {3, 0.15}});
  c[5] = Curve({{1, 0.9}, {3, 0.5}});
  EXPECT_FALSE(p.Promote(c)) << "6 at rung 1 keep 2: 0.1 and 0.15, not 0.2";
  for (int i = 6; i < 9; ++i) c[i] = Curve({{1, 0.9}, {3, 0.6}}, TrialState::kPruned);
  const std::optional<Promotion> promoted = p.Promote(c);  // 9 keep 3: 0.1, 0.15 and 0.2
  ASSERT_TRUE(promoted);
  EXPECT_EQ(promoted->number, 1);
  EXPECT_EQ(promoted->rung, 1) << "its rung is the highest its reports reached";
}

TEST(HyperbandResume, EachBracketPromotesItsOwnPausedTrials) {
  PrunerOptions o = Asha(1, 27);
  o.kind = "hyperband";
  o.resume = true;
  HyperbandPruner p(o, Direction::kMaximize);
  EXPECT_TRUE(p.Pauses());
  std::vector<std::int64_t> zero;  // trials of bracket 0 (rungs at 1, 3, 9)
  std::int64_t other = -1;         // one of another bracket
  for (std::int64_t n = 0; zero.size() < 4 || other < 0; ++n) {
    if (p.BracketOf(n) == 0) {
      if (zero.size() < 4) zero.push_back(n);
    } else if (other < 0) {
      other = n;
    }
  }
  Curves c = {{zero[0], Curve({{1, 0.9}})}, {zero[1], Curve({{1, 0.5}}, TrialState::kPaused)}};
  c[other] = Curve({{1, 0.1}, {3, 0.1}}, TrialState::kComplete);  // not in bracket 0's rung
  EXPECT_FALSE(p.Promote(c));
  c[zero[2]] = Curve({{1, 0.2}});
  c[zero[3]] = Curve({{1, 0.3}}, TrialState::kPruned);
  const std::optional<Promotion> next = p.Promote(c);  // bracket 0's rung 0 holds 4: keep 1 -- trial zero[0]
  EXPECT_FALSE(next);
  c[zero[0]].values[1] = 0.4;  // now the paused one leads
  ASSERT_TRUE(p.Promote(c));
  EXPECT_EQ(p.Promote(c)->number, zero[1]);
  EXPECT_EQ(p.Promote(c)->reason.rfind("bracket 0: promoted at rung 0", 0), 0u) << p.Promote(c)->reason;
}

// Issue 17: population-based training's schedule.
SamplerOptions PbtOptions() {
  SamplerOptions o;
  o.kind = "pbt";
  o.population = 4;
  o.interval = 3;
  o.quantile = 0.25;
  return o;
}

TrialCurve Member(double latest, std::int64_t step, TrialState state, std::int64_t checkpoint) {
  TrialCurve c{{{step, latest}}, state};
  c.checkpoint_step = checkpoint;
  return c;
}

TEST(PbtPruner, PausesEveryMemberAtEachInterval) {
  PbtPruner p(PbtOptions(), Direction::kMaximize);
  EXPECT_TRUE(p.Pauses());
  EXPECT_FALSE(p.PromotesFirst()) << "the whole population starts before any member goes on";
  const Curves c;
  EXPECT_FALSE(p.ShouldPrune(0, 1, c));
  EXPECT_FALSE(p.ShouldPrune(0, 2, c));
  ASSERT_TRUE(p.ShouldPrune(0, 3, c));
  EXPECT_EQ(*p.ShouldPrune(0, 6, c), "paused at step 6 (population-based training looks at its members every 3 steps)");
}

TEST(PbtPruner, TheBottomQuantileIsReplacedFromTheTopAndTheRestGoOn) {
  PbtPruner p(PbtOptions(), Direction::kMaximize);
  // Four members; ceil(4 * 0.25) = 1 in the bottom and in the top.
  Curves c = {{0, Member(0.9, 6, TrialState::kRunning, 6)},   {1, Member(0.5, 3, TrialState::kPaused, 3)},
              {7, Member(0.95, 9, TrialState::kComplete, 9)},  // finished: left the population
              {2, Member(0.2, 6, TrialState::kPaused, 6)},    {3, Member(0.7, 3, TrialState::kRunning, 3)},
              {4, Member(0.1, 3, TrialState::kPruned, 3)}};  // replaced earlier: not a member
  std::optional<Promotion> next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 1) << "the paused member furthest behind first";
  EXPECT_EQ(next->parent, -1);
  EXPECT_EQ(next->rung_step, 3);
  EXPECT_EQ(next->parent_step, -1) << "from its own checkpoint";
  EXPECT_EQ(next->reason, "goes on at step 3: value 0.5 is not in the bottom 1 of 4 members");
  c[1].state = TrialState::kRunning;
  next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 2);
  EXPECT_EQ(next->parent, 0) << "the top member, the only one in the top quantile";
  EXPECT_EQ(next->parent_step, 6) << "from the parent's latest checkpoint";
  EXPECT_EQ(next->reason.rfind("replaced at step 6: value 0.2 is in the bottom 1 of 4 members; trial 0", 0), 0u)
      << next->reason;
  // A top member without a checkpoint cannot be started from: the bottom one goes on instead.
  c[0].checkpoint_step = -1;
  next = p.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->parent, -1);
  EXPECT_NE(next->reason.find("no member of the top 1 has a checkpoint yet"), std::string::npos) << next->reason;
  // Minimising, the same values rank the other way: trial 2 (0.2) is now the best.
  PbtPruner low(PbtOptions(), Direction::kMinimize);
  c[0].checkpoint_step = 6;
  next = low.Promote(c);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->parent, -1);
}

TEST(PbtPruner, AParentIsDrawnAmongTheTopQuantile) {
  SamplerOptions o = PbtOptions();
  o.quantile = 0.5;
  PbtPruner p(o, Direction::kMaximize);
  std::set<std::int64_t> parents;
  for (std::int64_t step = 4; step < 400; step += 4) {  // the draw depends on the member and its step
    Curves c = {{0, Member(0.9, 8, TrialState::kRunning, 8)},
                {1, Member(0.8, 8, TrialState::kRunning, 8)},
                {5, Member(0.99, 40, TrialState::kComplete, 40)},  // finished: no longer a member
                {2, Member(0.3, step, TrialState::kPaused, step)},
                {3, Member(0.4, 500, TrialState::kRunning, 500)}};
    const std::optional<Promotion> next = p.Promote(c);
    ASSERT_TRUE(next);
    ASSERT_EQ(next->number, 2);
    parents.insert(next->parent);
  }
  EXPECT_EQ(parents, (std::set<std::int64_t>{0, 1})) << "both top members, and only they";
}

// Issue 40: a trial's step is untrusted input. Rung arithmetic once overflowed past 2^63 and the
// rung loops never ended, so each of these runs under a deadline: a hang fails the test instead
// of stalling the suite.
void WithinSeconds(int seconds, const std::function<void()>& body) {
  std::packaged_task<void()> task(body);
  std::future<void> done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(std::chrono::seconds(seconds)) == std::future_status::timeout) {
    ADD_FAILURE() << "a pruner call did not return within " << seconds << " s: it loops";
    std::fflush(nullptr);
    std::_Exit(1);  // the looping thread cannot be stopped; end here, with the failure printed
  }
  done.get();
}

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// The steps an adversarial trial reported in issue 40, in the order it reported them.
std::vector<std::int64_t> HostileSteps() {
  std::vector<std::int64_t> steps;
  for (std::int64_t s = 1; s <= kMax / 4; s *= 4) steps.push_back(s);  // 4^0 .. 4^31 (4^31 = 2^62)
  steps.push_back(kMax - 1);
  steps.push_back(kMax);
  return steps;
}

// Drives `pruner` as the coordinator does: each trial reports `steps` one by one with `value`,
// is asked about after every report, stops where it is pruned or paused, and Promote() runs after
// every report. Returns each trial's state at the end.
std::vector<TrialState> Drive(Pruner* pruner, const std::vector<std::vector<std::int64_t>>& steps,
                              const std::vector<double>& values) {
  Curves c;
  for (size_t n = 0; n < steps.size(); ++n) {
    const auto number = static_cast<std::int64_t>(n);
    c[number].state = TrialState::kRunning;
    for (const std::int64_t step : steps[n]) {
      c[number].values[step] = values[n];
      c[number].checkpoint_step = step;
      if (pruner->ShouldPrune(number, step, c)) {
        c[number].state = pruner->Pauses() ? TrialState::kPaused : TrialState::kPruned;
        break;
      }
      (void)pruner->Promote(c);
    }
    if (c[number].state == TrialState::kRunning) c[number].state = TrialState::kComplete;
  }
  std::vector<TrialState> states;
  for (const auto& [n, curve] : c) states.push_back(curve.state);
  return states;
}

TEST(HugeSteps, AshaJudgesEveryRungUpToTheLastThatFitsInt64) {
  WithinSeconds(20, [] {
    SuccessiveHalvingPruner p(Asha(1, 0, 4), Direction::kMaximize, 0);
    // Issue 40's probe: INT64_MAX straight away, then INT64_MAX - 1 and INT64_MAX in turn.
    Curves c = {{0, Curve({{kMax, 0.5}}, TrialState::kRunning)}};
    EXPECT_FALSE(p.ShouldPrune(0, kMax, c)) << "alone at each rung: the best goes on";
    c[0].state = TrialState::kComplete;
    c[1] = Curve({{kMax - 1, 0.4}}, TrialState::kRunning);
    const std::optional<std::string> pruned = p.ShouldPrune(1, kMax - 1, c);
    ASSERT_TRUE(pruned);
    EXPECT_EQ(*pruned, "pruned at rung 0 (step 1): value 0.4 is not in the best 1 of 2 trials at that rung");
    // 2^62 = 4^31 is the last rung below INT64_MAX: a trial reaching it, and only it, is judged there.
    c[2] = Curve({{std::int64_t{1} << 62, 0.3}}, TrialState::kRunning);
    EXPECT_TRUE(p.ShouldPrune(2, std::int64_t{1} << 62, c));
    EXPECT_EQ(Drive(&p, {HostileSteps(), HostileSteps(), HostileSteps()}, {0.5, 0.9, 0.1}),
              (std::vector<TrialState>{TrialState::kComplete, TrialState::kComplete, TrialState::kPruned}));
  });
}

TEST(HugeSteps, AshaResumeJudgesTheHighestRungAndPromotesThere) {
  WithinSeconds(20, [] {
    PrunerOptions o = Asha(1, 0, 4);
    o.resume = true;
    SuccessiveHalvingPruner p(o, Direction::kMinimize, 0);
    Curves c = {{0, Curve({{kMax, 0.1}}, TrialState::kComplete)}, {1, Curve({{kMax, 0.5}}, TrialState::kRunning)}};
    const std::optional<std::string> paused = p.ShouldPrune(1, kMax, c);
    ASSERT_TRUE(paused);
    EXPECT_EQ(*paused,
              "paused at rung 31 (step 4611686018427387904): value 0.5 is not (yet) in the best 1 of 2 trials at "
              "that rung");
    c[1].state = TrialState::kPaused;
    for (int n = 2; n < 9; ++n) c[n] = Curve({{std::int64_t{1} << 62, 0.9}}, TrialState::kComplete);
    const std::optional<Promotion> up = p.Promote(c);  // 9 at the rung: the best 2 go on
    ASSERT_TRUE(up);
    EXPECT_EQ(up->number, 1);
    EXPECT_EQ(up->rung, 31);
    EXPECT_EQ(up->rung_step, std::int64_t{1} << 62);
  });
}

TEST(HugeSteps, AshaWithAHugeMinResourceOrEarlyStoppingRateHasFewRungs) {
  WithinSeconds(20, [] {
    SuccessiveHalvingPruner big(Asha(kMax - 1, 0, 1000), Direction::kMaximize, 0);  // one rung, at INT64_MAX - 1
    Curves c = {{0, Curve({{kMax, 0.5}}, TrialState::kComplete)}, {1, Curve({{kMax, 0.4}}, TrialState::kRunning)}};
    const std::optional<std::string> pruned = big.ShouldPrune(1, kMax, c);
    ASSERT_TRUE(pruned);
    EXPECT_NE(pruned->find("rung 0 (step 9223372036854775806)"), std::string::npos) << *pruned;
    PrunerOptions late = Asha(2, 0, 4);
    late.min_early_stopping_rate = 60;  // the config's cap: 2 * 4^60 is past INT64_MAX, so no rung
    SuccessiveHalvingPruner none(late, Direction::kMaximize, late.min_early_stopping_rate);
    EXPECT_FALSE(none.ShouldPrune(1, kMax, c));
    EXPECT_FALSE(none.Promote(c));
  });
}

TEST(HugeSteps, HyperbandUpToInt64Max) {
  WithinSeconds(20, [] {
    PrunerOptions o = Asha(1, kMax, 4);
    o.kind = "hyperband";
    HyperbandPruner p(o, Direction::kMaximize);
    EXPECT_EQ(p.brackets(), 32);  // floor(log4(2^63 - 1)) + 1
    std::vector<std::vector<std::int64_t>> steps(40, HostileSteps());
    std::vector<double> values;
    for (int n = 0; n < 40; ++n) values.push_back(n % 2 ? 1e308 : -1e308);
    const std::vector<TrialState> states = Drive(&p, steps, values);
    EXPECT_EQ(std::count(states.begin(), states.end(), TrialState::kPruned) +
                  std::count(states.begin(), states.end(), TrialState::kComplete),
              40);
    EXPECT_GT(std::count(states.begin(), states.end(), TrialState::kPruned), 0);
    o.resume = true;
    HyperbandPruner paused(o, Direction::kMaximize);
    const std::vector<TrialState> resumed = Drive(&paused, steps, values);
    EXPECT_GT(std::count(resumed.begin(), resumed.end(), TrialState::kPaused), 0);
  });
}

TEST(HugeSteps, MedianOfValuesNearDblMaxStaysFinite) {
  WithinSeconds(20, [] {
    MedianPruner p(Median(2), Direction::kMaximize);
    Curves c = {
        {0, Curve({{kMax, 1e308}})}, {1, Curve({{kMax, 1e308}})}, {2, Curve({{kMax, -1e308}}, TrialState::kRunning)}};
    const std::optional<std::string> pruned = p.ShouldPrune(2, kMax, c);
    ASSERT_TRUE(pruned);
    EXPECT_NE(pruned->find("1e+308"), std::string::npos) << "the median of 1e308 and 1e308, not inf: " << *pruned;
    // A trial whose best is -1e308 is judged by -1e308: its best was once clamped to -1e300, which
    // beat a median of -1e301.
    c[0].values = {{kMax - 1, -1e301}};
    c[1].values = {{kMax - 1, -1e301}};
    c[2].values = {{kMax - 1, -1e308}};
    EXPECT_TRUE(p.ShouldPrune(2, kMax - 1, c));
    MedianPruner minimize(Median(2), Direction::kMinimize);
    c[2].values = {{kMax - 1, -1e308}};
    EXPECT_FALSE(minimize.ShouldPrune(2, kMax - 1, c));
    MedianPruner warm(Median(0, kMax - 1, kMax), Direction::kMaximize);  // warm-up and interval at the limit
    EXPECT_FALSE(warm.ShouldPrune(2, kMax - 2, c));
    EXPECT_EQ(Drive(&p, {HostileSteps(), HostileSteps(), HostileSteps()}, {1e308, 1e308, -1e308}).back(),
              TrialState::kPruned);
  });
}

TEST(HugeSteps, PbtAtInt64Max) {
  WithinSeconds(20, [] {
    SamplerOptions o = PbtOptions();
    o.interval = kMax;
    PbtPruner p(o, Direction::kMaximize);
    const Curves none;
    EXPECT_FALSE(p.ShouldPrune(0, kMax - 1, none));
    EXPECT_TRUE(p.ShouldPrune(0, kMax, none));
    o.interval = 4;
    PbtPruner every4(o, Direction::kMaximize);
    Curves c = {{0, Member(1e308, kMax - 3, TrialState::kPaused, kMax - 3)},
                {1, Member(-1e308, kMax - 3, TrialState::kPaused, kMax - 3)},
                {2, Member(0.5, kMax - 3, TrialState::kRunning, kMax - 3)},
                {3, Member(0.4, kMax - 3, TrialState::kRunning, kMax - 3)}};
    const std::optional<Promotion> next = every4.Promote(c);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->rung_step, kMax - 3);
    c[next->number].state = TrialState::kRunning;
    ASSERT_TRUE(every4.Promote(c));
  });
}

}  // namespace
}  // namespace cleansweep
