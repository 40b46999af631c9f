#include "transport/in_process_transport.hpp"

namespace cleansweep {

void InProcessHub::Post(int dest, Envelope envelope) {
  Mailbox& box = *boxes_.at(static_cast<size_t>(dest));
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    box.queue.push_back(std::move(envelope));
  }
  box.ready.notify_one();
}

std::optional<Envelope> InProcessHub::Take(int rank, Millis max_wait) {
  Mailbox& box = *boxes_.at(static_cast<size_t>(rank));
  std::unique_lock<std::mutex> lock(box.mutex);
  if (!box.ready.wait_for(lock, max_wait, [&] { return !box.queue.empty(); })) return std::nullopt;
  Envelope envelope = std::move(box.queue.front());
  box.queue.pop_front();
  return envelope;
}

Status InProcessTransport::Send(int dest, const Message& message) {
  if (dest < 0 || dest >= size()) return Status::RuntimeError("send to rank " + std::to_string(dest) + " out of range");
  Result<Message> copy = Decode(static_cast<int>(TagOf(message)), Encode(message));
  if (!copy.ok()) return copy.status();
  hub_->Post(dest, Envelope{rank_, std::move(*copy)});
  return Status::Ok();
}

Result<std::optional<Envelope>> InProcessTransport::Receive(Millis max_wait) { return hub_->Take(rank_, max_wait); }

}  // namespace cleansweep
