// The TCP port a worker holds for the trials it leads (MASTER_PORT; docs/multi-gpu.md). The port
// is bound (SO_REUSEADDR, never listened on) for the worker's whole life, so the kernel gives it
// to no other socket on the node, while the trial's rank 0, which binds it with SO_REUSEADDR as
// torch.distributed's TCPStore does, may still take it.
#pragma once

#include <string>

#include "util/status.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

class RendezvousPort {
 public:
  // Binds a free port on every address of the node.
  static Result<RendezvousPort> Reserve();
  int port() const { return port_; }

 private:
  UniqueFd socket_;
  int port_ = 0;
};

// The address other nodes reach this one by (MASTER_ADDR): the host name, which cluster nodes
// resolve; 127.0.0.1 when the name does not resolve here (a single machine).
std::string ReachableAddress();

}  // namespace cleansweep
