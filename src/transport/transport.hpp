// Transport: how rank 0 and the workers exchange messages. MpiTransport is the real one;
// InProcessTransport lets tests run a coordinator and workers as threads of one process.
#pragma once

#include <optional>

#include "transport/messages.hpp"
#include "util/duration.hpp"

namespace cleansweep {

struct Envelope {
  int source = -1;
  Message message;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual Status Send(int dest, const Message& message) = 0;
  // Waits at most `max_wait` for a message to this rank, without spinning a core. nullopt when
  // none came; an error when the transport itself failed.
  virtual Result<std::optional<Envelope>> Receive(Millis max_wait) = 0;
  // A hint: while true, someone waits on this rank's next message (a trial blocked on a
  // parameter it asked for), so Receive looks for it every few hundred microseconds instead of
  // backing off to save the core. A transport that wakes on arrival ignores it.
  virtual void SetResponsive(bool /*responsive*/) {}
};

}  // namespace cleansweep
