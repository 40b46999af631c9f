// RankQueue: worker ranks in first-in, first-out order, each at most once, with removal from
// anywhere in O(1). The coordinator keeps its free workers in two of them (idle ones, and busy ones
// with room in their queue), so a turn costs the same with 16 workers or 65,536.
#pragma once

#include <cstddef>
#include <vector>

namespace cleansweep {

class RankQueue {
 public:
  explicit RankQueue(int ranks = 0)
      : next_(static_cast<size_t>(ranks), kNone),
        prev_(static_cast<size_t>(ranks), kNone),
        in_(static_cast<size_t>(ranks)) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  int front() const { return head_; }  // valid when !empty()
  bool Contains(int rank) const { return rank >= 0 && Index(rank) < in_.size() && in_[Index(rank)]; }

  // Appends `rank`; one already queued keeps its place.
  void PushBack(int rank) {
    if (Contains(rank)) return;
    in_[Index(rank)] = true;
    prev_[Index(rank)] = tail_;
    next_[Index(rank)] = kNone;
    if (tail_ == kNone) {
      head_ = rank;
    } else {
      next_[Index(tail_)] = rank;
    }
    tail_ = rank;
    ++size_;
  }

  // Takes `rank` out, wherever it is; nothing when it is not queued.
  void Erase(int rank) {
    if (!Contains(rank)) return;
    const int before = prev_[Index(rank)], after = next_[Index(rank)];
    if (before == kNone) {
      head_ = after;
    } else {
      next_[Index(before)] = after;
    }
    if (after == kNone) {
      tail_ = before;
    } else {
      prev_[Index(after)] = before;
    }
    in_[Index(rank)] = false;
    --size_;
  }

  void PopFront() { Erase(head_); }

 private:
  static constexpr int kNone = -1;
  static size_t Index(int rank) { return static_cast<size_t>(rank); }

  std::vector<int> next_, prev_;
  std::vector<bool> in_;
  int head_ = kNone, tail_ = kNone;
  size_t size_ = 0;
};

}  // namespace cleansweep
