// Each pruner's decisions against cases computed by hand.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cleansweep
