#include "samplers/pareto.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "util/random.hpp"

namespace cleansweep {
namespace {

TEST(Pareto, MinimizedNegatesMaximisedMetrics) {
  const std::vector<Metric> metrics = {{"acc", Direction::kMaximize}, {"ms", Direction::kMinimize}};
  EXPECT_EQ(Minimized(metrics, {0.9, 12.5}), (Point{-0.9, 12.5}));
}

TEST(Pareto, DominanceNeedsNoWorseEverywhereAndBetterSomewhere) {
  EXPECT_TRUE(Dominates({1, 2}, {1, 3}));
  EXPECT_FALSE(Dominates({1, 3}, {1, 2}));
  EXPECT_FALSE(Dominates({1, 2}, {1, 2})) << "equal points do not dominate each other";
  EXPECT_TRUE(WeaklyDominates({1, 2}, {1, 2}));
  EXPECT_FALSE(Dominates({0, 3}, {1, 2})) << "a trade-off";
  EXPECT_FALSE(Dominates({1, 2}, {0, 3}));
}

TEST(Pareto, NondominatedSortingPeelsFronts) {
  //   (0,4) (1,1) (4,0) are front 0; (2,2) and (1,5) front 1 (behind (1,1) and (0,4)); (3,3) front 2.
  const std::vector<Point> points = {{3, 3}, {0, 4}, {2, 2}, {1, 1}, {4, 0}, {1, 5}};
  EXPECT_EQ(NondominatedRanks(points), (std::vector<int>{2, 0, 1, 0, 0, 1}));
  EXPECT_EQ(NondominatedRanks({{1, 1}, {1, 1}}), (std::vector<int>{0, 0})) << "duplicates share a front";
  EXPECT_TRUE(NondominatedRanks({}).empty());
}

// The definition, peeled front by front: what both sorts (the pairwise one, the two-component
// sweep) must agree with.
std::vector<int> PeeledRanks(const std::vector<Point>& points) {
  std::vector<int> rank(points.size(), -1);
  for (int front = 0, left = static_cast<int>(points.size()); left > 0; ++front) {
    std::vector<size_t> now;
    for (size_t i = 0; i < points.size(); ++i) {
      if (rank[i] >= 0) continue;
      bool beaten = false;
      for (size_t j = 0; j < points.size() && !beaten; ++j) beaten = rank[j] < 0 && Dominates(points[j], points[i]);
      if (!beaten) now.push_back(i);
    }
    for (const size_t i : now) rank[i] = front;
    left -= static_cast<int>(now.size());
  }
  return rank;
}

TEST(Pareto, NondominatedSortingAgreesWithPeelingInTwoAndThreeDimensions) {
  SplitMix64 rng(7);
  for (int round = 0; round < 300; ++round) {
    const size_t dims = round % 3 == 0 ? 3 : 2;
    const size_t n = 1 + rng.Below(60);
    // Few distinct values, so ties in one component, and whole copies, are common.
    const double grid = round % 2 ? 5 : 1e6;
    std::vector<Point> points(n, Point(dims));
    for (Point& p : points) {
      for (double& v : p) v = std::floor(rng.Uniform() * grid) - grid / 2;
    }
    ASSERT_EQ(NondominatedRanks(points), PeeledRanks(points)) << "round " << round << ", " << n << " points";
  }
}

// NSGA-II ranks a trial that joins a ranked population from the members' ranks; that must be the
// full sort's answer, for every kind of newcomer (dominated, on the front, equal to a member), and
// the shortcut must decline exactly when the newcomer dominates a member.
TEST(Pareto, RanksWithOneMoreAgreeWithAFullSortOrDecline) {
  SplitMix64 rng(7);
  int taken = 0, declined = 0;
  for (int round = 0; round < 2000; ++round) {
    const size_t objectives = 2 + round % 2;
    const size_t n = 1 + rng.Next() % 40;
    const bool coarse = round % 3 == 0;  // a few values per component: ties and equal points
    std::vector<Point> points(n, Point(objectives));
    for (Point& p : points) {
      for (double& v : p) v = coarse ? static_cast<double>(rng.Next() % 4) : rng.Uniform();
    }
    const std::vector<Point> members(points.begin(), points.end() - 1);
    bool dominates_one = false;
    for (const Point& m : members) dominates_one = dominates_one || Dominates(points.back(), m);
    const std::vector<int> ranks = RanksWithOneMore(points, NondominatedRanks(members));
    if (dominates_one) {
      EXPECT_TRUE(ranks.empty()) << "round " << round;
      ++declined;
    } else {
      EXPECT_EQ(ranks, NondominatedRanks(points)) << "round " << round;
      ++taken;
    }
  }
  EXPECT_GT(taken, 500);  // both branches were exercised
  EXPECT_GT(declined, 500);
}

TEST(Pareto, CrowdingDistanceIsInfiniteAtTheEndsAndSumsNormalisedGaps) {
  const std::vector<double> d = CrowdingDistances({{0, 4}, {1, 2}, {4, 0}, {2, 1}});
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(d[0], inf);
  EXPECT_EQ(d[2], inf);
  // (1,2): neighbours (0,4) and (2,1): 2/4 + 3/4.  (2,1): neighbours (1,2) and (4,0): 3/4 + 2/4.
  EXPECT_DOUBLE_EQ(d[1], 1.25);
  EXPECT_DOUBLE_EQ(d[3], 1.25);
}

TEST(Pareto, HypervolumeOfKnownFronts) {
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 1}}, {3, 3}), 4);
  // Two boxes of 2x3 and 3x2 overlapping in 2x2: 6 + 6 - 4.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0}, {0, 1}}, {3, 3}), 8);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0}, {0, 1}, {2, 2}}, {3, 3}), 8) << "a dominated point adds nothing";
  EXPECT_DOUBLE_EQ(Hypervolume({{4, 0}, {0, 1}}, {3, 3}), 6) << "a point outside the box counts nothing";
  EXPECT_EQ(Hypervolume({}, {1, 1}), 0);
  // Three dimensions: boxes 1x2x2 (from (1,0,0)) and 2x1x2 (from (0,1,0)) overlapping in 1x1x2, and
  // a third (0,0,1): 2x2x1 of which 1x1x1 + 1x1x1 + 1x1x1 lie inside the first two: 4 + 4 - 2 + 4 - 3 = 7.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0, 0}, {0, 1, 0}}, {2, 2, 2}), 6);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {2, 2, 2}), 7);
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0, 0}, {1, 0, 0}, {1.5, 0.5, 0.5}}, {2, 2, 2}), 4) << "duplicates count once";
  // Four dimensions take the general slicing: 8 + 8 - 4.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 0, 0, 0}, {0, 1, 0, 0}}, {2, 2, 2, 2}), 12);
}

TEST(Pareto, HypervolumeInThreeDimensionsAgreesWithMonteCarlo) {
  SplitMix64 rng(5);
  std::vector<Point> points;
  for (int i = 0; i < 30; ++i) points.push_back({rng.Uniform(), rng.Uniform(), rng.Uniform()});
  const Point reference = {1, 1, 1};
  const int samples = 200000;
  int inside = 0;
  for (int s = 0; s < samples; ++s) {
    const Point x = {rng.Uniform(), rng.Uniform(), rng.Uniform()};
    for (const Point& p : points) {
      if (WeaklyDominates(p, x)) {
        ++inside;
        break;
      }
    }
  }
  const double estimate = static_cast<double>(inside) / samples;
  // The estimate's standard error is below 0.0012; six of them is a test that does not flake.
  EXPECT_NEAR(Hypervolume(points, reference), estimate, 0.007);
}

}  // namespace
}  // namespace cleansweep
