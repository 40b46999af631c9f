// Where a trial that takes several workers (a gang; trial.gpus) runs: which free workers, on which
// nodes (docs/multi-gpu.md, "Placement"). Pure: it sees nodes as lists of worker ranks and asks
// whether a rank is free; the coordinator owns the workers.
//
// Policy. A gang that fits on one node goes to one node: the free node it fits best (the fewest
// free workers that hold it), so that whole nodes stay free for the largest gangs. A gang larger
// than a node (or one that may split, trial.allow_split, when no node has room) takes the nodes
// with the most free workers first. The first trial that waits holds a reservation: the node (or
// nodes) with the most free workers is kept for it, and as that node's trials end their workers
// stay free for it; later trials may use only the free workers it does not need (backfill), so it
// starts as soon as the node drains and no stream of smaller trials can starve it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace cleansweep {

class GangPlanner {
 public:
  using IsFree = std::function<bool(int rank)>;
  using FreeByNode = std::vector<std::vector<int>>;

  // `nodes`: each node's worker ranks. `allow_split`: a gang that fits on a node may still span nodes.
  GangPlanner(std::vector<std::vector<int>> nodes, bool allow_split);

  // Each node's free workers now: read once for a round of placements.
  FreeByNode FreeNow(const IsFree& free) const;
  // The workers for a gang of `gpus` among `free`, grouped by node (RANK order: the first is its
  // rank 0), or none when it does not fit now. `head`: it is the trial the reservation is for,
  // and may use the reserved workers; any other trial may not. The caller then Take()s them.
  std::vector<int> Place(int gpus, const FreeByNode& free, bool head) const;
  void Take(const std::vector<int>& ranks, FreeByNode* free) const;

  // The first waiting trial, of `gpus`, did not fit: keep workers for it from now on. A
  // reservation for the same trial stays where it is.
  void Reserve(std::int64_t trial, int gpus, const FreeByNode& free);
  void ClearReservation() { reserved_trial_ = -1, reserved_nodes_.clear(); }
  std::int64_t reserved_trial() const { return reserved_trial_; }
  const std::vector<int>& reserved_nodes() const { return reserved_nodes_; }

  int node_of(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < node_of_.size() ? node_of_[static_cast<size_t>(rank)] : -1;
  }
  size_t largest_node() const { return largest_; }
  size_t node_count() const { return nodes_.size(); }

 private:
  // Free workers per node, less those the reservation holds unless `head`.
  FreeByNode Usable(const FreeByNode& free, bool head) const;
  bool OneNode(int gpus) const { return static_cast<size_t>(gpus) <= largest_; }

  std::vector<std::vector<int>> nodes_;
  std::vector<int> node_of_;  // by rank; -1 for none
  bool allow_split_;
  size_t largest_ = 0;
  std::int64_t reserved_trial_ = -1;
  int reserved_gpus_ = 0;
  std::vector<int> reserved_nodes_;
};

}  // namespace cleansweep
