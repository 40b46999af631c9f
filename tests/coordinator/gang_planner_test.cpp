// Where gang trials go (docs/multi-gpu.md, "Placement"): one node when they fit one, the node
// they fit best, and a reservation that keeps the first waiting trial from being starved.
#include "coordinator/gang_planner.hpp"

#include <set>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

// `nodes` nodes of `per_node` workers, ranks from 1.
std::vector<std::vector<int>> Nodes(int nodes, int per_node) {
  std::vector<std::vector<int>> out(static_cast<size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < per_node; ++i) out[static_cast<size_t>(n)].push_back(1 + n * per_node + i);
  }
  return out;
}

// `planner`'s nodes, with these ranks free.
GangPlanner::FreeByNode FreeSet(const GangPlanner& planner, const std::set<int>& free) {
  return planner.FreeNow([&free](int rank) { return free.count(rank) > 0; });
}

TEST(GangPlanner, AGangThatFitsANodeGoesToTheNodeItFitsBestAndNeverSplits) {
  GangPlanner planner(Nodes(3, 4), false);
  // node 0: 1 free, node 1: 4 free, node 2: 2 free.
  const std::set<int> free = {4, 5, 6, 7, 8, 11, 12};
  EXPECT_EQ(planner.Place(1, FreeSet(planner, free), false), (std::vector<int>{4}));  // the fullest node that holds it
  EXPECT_EQ(planner.Place(2, FreeSet(planner, free), false),
            (std::vector<int>{11, 12}));  // node 2, keeping node 1 whole
  EXPECT_EQ(planner.Place(4, FreeSet(planner, free), false), (std::vector<int>{5, 6, 7, 8}));
  // Three free on no one node: it waits, though 7 workers are free.
  EXPECT_TRUE(planner.Place(3, FreeSet(planner, {4, 11, 12, 5, 6}), false).empty());
  GangPlanner splitting(Nodes(3, 4), true);
  EXPECT_EQ(splitting.Place(3, FreeSet(splitting, {4, 11, 12}), false).size(), 3u);
}

TEST(GangPlanner, AGangLargerThanANodeTakesTheFewestNodes) {
  GangPlanner planner(Nodes(3, 4), false);
  const std::vector<int> ranks = planner.Place(6, FreeSet(planner, {1, 5, 6, 7, 8, 9, 10, 11, 12}), false);
  ASSERT_EQ(ranks.size(), 6u);
  std::set<int> nodes;
  for (const int r : ranks) nodes.insert(planner.node_of(r));
  EXPECT_EQ(nodes.size(), 2u);                   // two whole-ish nodes, not node 0's single worker
  EXPECT_EQ(planner.node_of(ranks.front()), 1);  // grouped by node: rank 0 first on its node
  EXPECT_TRUE(planner.Place(6, FreeSet(planner, {1, 2, 5, 9}), false).empty());
}

TEST(GangPlanner, TheReservationKeepsWorkersForTheFirstWaitingTrialAndOthersBackfillAroundIt) {
  GangPlanner planner(Nodes(2, 4), false);
  std::set<int> free = {1, 2, 5};  // node 0: 2 free, node 1: 1 free
  ASSERT_TRUE(planner.Place(4, FreeSet(planner, free), true).empty());
  planner.Reserve(7, 4, FreeSet(planner, free));
  EXPECT_EQ(planner.reserved_trial(), 7);
  EXPECT_EQ(planner.reserved_nodes(), (std::vector<int>{0}));  // the node closest to holding it
  // A 1-GPU trial may not take node 0's free workers (the reservation needs all four), only node 1's.
  EXPECT_EQ(planner.Place(1, FreeSet(planner, free), false), (std::vector<int>{5}));
  EXPECT_TRUE(planner.Place(2, FreeSet(planner, free), false).empty());
  // Node 0 drains: the waiting trial gets it; nothing else could have.
  free = {1, 2, 3, 4};
  EXPECT_TRUE(planner.Place(1, FreeSet(planner, free), false).empty());
  EXPECT_EQ(planner.Place(4, FreeSet(planner, free), true), (std::vector<int>{1, 2, 3, 4}));
  // A second call for the same trial keeps the reservation where it is, even if another node now looks closer.
  planner.Reserve(7, 4, FreeSet(planner, {5, 6, 7}));
  EXPECT_EQ(planner.reserved_nodes(), (std::vector<int>{0}));
  planner.ClearReservation();
  EXPECT_EQ(planner.Place(1, FreeSet(planner, {1}), false), (std::vector<int>{1}));
}

TEST(GangPlanner, AReservationHoldsOnlyWhatItNeeds) {
  GangPlanner planner(Nodes(1, 8), false);
  planner.Reserve(3, 2, FreeSet(planner, {1}));
  // Two of the node's free workers are the reservation's; the rest may backfill.
  EXPECT_EQ(planner.Place(4, FreeSet(planner, {1, 2, 3, 4, 5, 6}), false), (std::vector<int>{3, 4, 5, 6}));
  EXPECT_TRUE(planner.Place(5, FreeSet(planner, {1, 2, 3, 4, 5, 6}), false).empty());
}

}  // namespace
}  // namespace cleansweep
