#include "coordinator/gang_planner.hpp"

#include <algorithm>
#include <numeric>

namespace cleansweep {

GangPlanner::GangPlanner(std::vector<std::vector<int>> nodes, bool allow_split)
    : nodes_(std::move(nodes)), allow_split_(allow_split) {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    largest_ = std::max(largest_, nodes_[n].size());
    for (const int rank : nodes_[n]) {
      if (static_cast<size_t>(rank) >= node_of_.size()) node_of_.resize(static_cast<size_t>(rank) + 1, -1);
      node_of_[static_cast<size_t>(rank)] = static_cast<int>(n);
    }
  }
}

GangPlanner::FreeByNode GangPlanner::FreeNow(const IsFree& free) const {
  FreeByNode out(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const int rank : nodes_[n]) {
      if (free(rank)) out[n].push_back(rank);
    }
  }
  return out;
}

void GangPlanner::Take(const std::vector<int>& ranks, FreeByNode* free) const {
  for (const int rank : ranks) {
    std::vector<int>& on_node = (*free)[static_cast<size_t>(node_of(rank))];
    on_node.erase(std::find(on_node.begin(), on_node.end(), rank));
  }
}

GangPlanner::FreeByNode GangPlanner::Usable(const FreeByNode& free, bool head) const {
  if (head || reserved_trial_ < 0) return free;
  FreeByNode usable = free;
  int need = reserved_gpus_;  // the reservation holds the first free workers of its nodes, as many as it needs
  for (const int n : reserved_nodes_) {
    std::vector<int>& on_node = usable[static_cast<size_t>(n)];
    const auto held = static_cast<size_t>(std::min<std::int64_t>(need, static_cast<std::int64_t>(on_node.size())));
    on_node.erase(on_node.begin(), on_node.begin() + static_cast<std::ptrdiff_t>(held));
    need -= static_cast<int>(held);
  }
  return usable;
}

std::vector<int> GangPlanner::Place(int gpus, const FreeByNode& free, bool head) const {
  const FreeByNode usable = Usable(free, head);
  const auto want = static_cast<size_t>(gpus);
  if (OneNode(gpus)) {  // best fit: the node with the fewest free workers that still holds it
    int best = -1;
    for (size_t n = 0; n < usable.size(); ++n) {
      if (usable[n].size() >= want && (best < 0 || usable[n].size() < usable[static_cast<size_t>(best)].size())) {
        best = static_cast<int>(n);
      }
    }
    if (best >= 0) {
      const std::vector<int>& on_node = usable[static_cast<size_t>(best)];
      return {on_node.begin(), on_node.begin() + gpus};
    }
    if (!allow_split_) return {};
  }
  // Across nodes: those with the most free workers first, so the gang spans as few as it can.
  std::vector<size_t> order(usable.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return usable[a].size() > usable[b].size(); });
  std::vector<int> ranks;
  for (const size_t n : order) {
    for (const int rank : usable[n]) {
      if (ranks.size() == want) break;
      ranks.push_back(rank);
    }
    if (ranks.size() == want) return ranks;
  }
  return {};
}

void GangPlanner::Reserve(std::int64_t trial, int gpus, const FreeByNode& free) {
  if (reserved_trial_ == trial) return;
  reserved_trial_ = trial;
  reserved_gpus_ = gpus;
  reserved_nodes_.clear();
  const FreeByNode& usable = free;
  std::vector<size_t> order;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!OneNode(gpus) || nodes_[n].size() >= static_cast<size_t>(gpus)) order.push_back(n);
  }
  // The nodes closest to holding it: the most free workers now.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return usable[a].size() > usable[b].size(); });
  size_t room = 0;
  for (const size_t n : order) {
    if (room >= static_cast<size_t>(gpus)) break;
    reserved_nodes_.push_back(static_cast<int>(n));
    room += nodes_[n].size();
  }
}

}  // namespace cleansweep
