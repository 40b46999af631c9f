// Mailboxes in memory, one per rank; each rank's transport may live on its own thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/transport.hpp"

namespace cleansweep {

class InProcessHub {
 public:
  explicit InProcessHub(int size) : boxes_(static_cast<size_t>(size)) {
    for (auto& box : boxes_) box = std::make_unique<Mailbox>();
  }
  int size() const { return static_cast<int>(boxes_.size()); }

  void Post(int dest, Envelope envelope);
  std::optional<Envelope> Take(int rank, Millis max_wait);

 private:
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Envelope> queue;
  };
  std::vector<std::unique_ptr<Mailbox>> boxes_;
};

class InProcessTransport : public Transport {
 public:
  InProcessTransport(InProcessHub* hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }
  // Round-trips through Encode/Decode, so tests exercise the serialization too.
  Status Send(int dest, const Message& message) override;
  Result<std::optional<Envelope>> Receive(Millis max_wait) override;

 private:
  InProcessHub* hub_;
  int rank_;
};

}  // namespace cleansweep
