// The fork server's wire protocol, on a SOCK_SEQPACKET socket pair between a worker and the
// server it started (fork_server_launcher.hpp; the server is fork_server.hpp):
//   server -> worker, once:  "ready" when the plugin loaded, or "error: <what>" and exit.
//   worker -> server:        a ForkRequest, with the trial's pipe ends as SCM_RIGHTS.
//   server -> worker:        "PID RSS_KB": the child's pid and the server's resident memory
//                            when it forked (what the child shares), or "-errno" when clone failed.
//   worker -> server:        a ForkRequest with `standby` set and no descriptors: fork a child
//                            that waits for its trial (trial.prefork).
//   server -> worker:        "PID RSS_KB" as above, with the worker's end of a socket pair to
//                            that child as SCM_RIGHTS.
//   worker -> standby child: a ForkRequest with the trial's pipe ends, as to the server.
//   standby child -> worker: "taken"; the child becomes that trial (its error pipe says when it
//                            runs the trial's code, as for a forked one).
// Every child is cloned with CLONE_PARENT: it is the worker's child, not the server's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

inline constexpr int kForkServerVersion = 2;

struct ForkRequest {
  std::vector<std::string> argv;  // argv[0] is the plugin's path
  std::vector<std::string> env;   // the trial's whole environment, "NAME=value"
  std::int64_t memory_limit = 0;  // RLIMIT_DATA, or 0
  pid_t parent = 0;               // the worker: the child checks it is its parent
  // Passed alongside: out, report, control, error and, when has_cgroup, cgroup.procs.
  bool has_cgroup = false;
  // Fork a child that waits for a trial instead: argv and env are empty, no descriptors come.
  bool standby = false;
};

// Sends `request` with `fds` (none for a standby, else 4 or 5 of them, in the order above).
// MSG_NOSIGNAL: a dead server is an error (EPIPE), not a signal.
Status SendForkRequest(int socket, const ForkRequest& request, const std::vector<int>& fds);

// Receives one request. Ok with *eof set when the worker closed its end.
Status ReceiveForkRequest(int socket, ForkRequest* request, std::vector<UniqueFd>* fds, bool* eof);

// Decodes a request's bytes (what ReceiveForkRequest read) that came with `fd_count` descriptors.
// Bounded: string counts are checked against the bytes there are, and trailing bytes refused.
Status DecodeForkRequest(const std::string& body, size_t fd_count, ForkRequest* request);

// One short message (the hello, a reply) and its reading, with a timeout in milliseconds (-1: none).
// `fd`: a descriptor to pass along (-1: none).
Status SendMessage(int socket, const std::string& text, int fd = -1);
// Ok with an empty text at EOF; RuntimeError on a timeout. A descriptor that came along goes to
// *fd when it is given (else it is closed).
Status ReceiveMessage(int socket, int timeout_ms, std::string* text, UniqueFd* fd = nullptr);

}  // namespace cleansweep
