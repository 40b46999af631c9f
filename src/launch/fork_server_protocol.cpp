#include "launch/fork_server_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cleansweep {
namespace {

constexpr size_t kMaxRequest = 1 << 20;  // argv and environment together
constexpr size_t kMaxFds = 5;

void PutInt(std::string* out, std::int64_t v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }

bool GetInt(const std::string& in, size_t* at, std::int64_t* v) {
  if (*at + sizeof *v > in.size()) return false;
  std::memcpy(v, in.data() + *at, sizeof *v);
  *at += sizeof *v;
  return true;
}

void PutStrings(std::string* out, const std::vector<std::string>& strings) {
  PutInt(out, static_cast<std::int64_t>(strings.size()));
  for (const std::string& s : strings) out->append(s.c_str(), s.size() + 1);
}

bool GetStrings(const std::string& in, size_t* at, std::vector<std::string>* strings) {
  std::int64_t n = 0;
  if (!GetInt(in, at, &n) || n < 0 || static_cast<size_t>(n) > in.size()) return false;
  for (std::int64_t i = 0; i < n; ++i) {
    const size_t end = in.find('\0', *at);
    if (end == std::string::npos) return false;
    strings->push_back(in.substr(*at, end - *at));
    *at = end + 1;
  }
  return true;
}

std::string Errno(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// One datagram of `body` with `fds` as SCM_RIGHTS (none: a plain send). MSG_NOSIGNAL: a peer that is
// gone is an error (EPIPE), not a signal.
Status SendWithFds(int socket, std::string body, const std::vector<int>& fds, const char* what) {
  if (fds.size() > kMaxFds) return Status::RuntimeError(std::string(what) + ": too many descriptors");
  iovec iov{body.data(), body.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&msg);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  const ssize_t n = RetryOnEintr([&] { return ::sendmsg(socket, &msg, MSG_NOSIGNAL); });
  if (n < 0) return Status::RuntimeError(Errno(what));
  return Status::Ok();
}

// One datagram into *body (resized to what came; its size on entry is the most taken) and the
// descriptors that came with it into *fds (closed on destruction). The byte count, 0 at end of
// file, -1 with errno on an error; *truncated when the datagram or its descriptors did not fit.
ssize_t ReceiveWithFds(int socket, std::string* body, std::vector<UniqueFd>* fds, bool* truncated) {
  iovec iov{body->data(), body->size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = RetryOnEintr([&] { return ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); });
  const int saved_errno = errno;
  fds->clear();
  for (cmsghdr* h = n > 0 ? CMSG_FIRSTHDR(&msg) : nullptr; h; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
      fds->emplace_back(fd);
    }
  }
  *truncated = n > 0 && (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  body->resize(n > 0 ? static_cast<size_t>(n) : 0);
  errno = saved_errno;
  return n;
}

}  // namespace

Status SendForkRequest(int socket, const ForkRequest& request, const std::vector<int>& fds) {
  std::string body;
  PutInt(&body, kForkServerVersion);
  PutInt(&body, request.memory_limit);
  PutInt(&body, request.parent);
  PutInt(&body, request.has_cgroup ? 1 : 0);
  PutInt(&body, request.standby ? 1 : 0);
  PutStrings(&body, request.argv);
  PutStrings(&body, request.env);
  if (body.size() > kMaxRequest)
    return Status::InvalidInput("fork request: the trial's argv and environment exceed 1 MiB");
  return SendWithFds(socket, std::move(body), fds, "sendmsg to the fork server");
}

Status ReceiveForkRequest(int socket, ForkRequest* request, std::vector<UniqueFd>* fds, bool* eof) {
  // The message's size first (a peek), so the buffer is what the request needs, not 1 MiB a time.
  const ssize_t size = RetryOnEintr([&] { return ::recv(socket, nullptr, 0, MSG_PEEK | MSG_TRUNC); });
  if (size < 0) return Status::RuntimeError(Errno("recv"));
  std::string body(std::min(static_cast<size_t>(size) + 1, kMaxRequest), '\0');
  bool truncated = false;
  const ssize_t n = ReceiveWithFds(socket, &body, fds, &truncated);
  *eof = n == 0;
  if (n == 0) return Status::Ok();
  if (n < 0) return Status::RuntimeError(Errno("recvmsg"));
  if (truncated) return Status::RuntimeError("fork request truncated");
  return DecodeForkRequest(body, fds->size(), request);
}

Status DecodeForkRequest(const std::string& body, size_t fd_count, ForkRequest* request) {
  size_t at = 0;
  std::int64_t version = 0, limit = 0, parent = 0, cgroup = 0, standby = 0;
  *request = ForkRequest();
  if (body.size() > kMaxRequest || !GetInt(body, &at, &version) || version != kForkServerVersion ||
      !GetInt(body, &at, &limit) || !GetInt(body, &at, &parent) || !GetInt(body, &at, &cgroup) ||
      !GetInt(body, &at, &standby) || !GetStrings(body, &at, &request->argv) || !GetStrings(body, &at, &request->env) ||
      (request->argv.empty() != (standby != 0)) || at != body.size()) {
    return Status::RuntimeError("malformed fork request (a worker of another cleansweep version?)");
  }
  request->memory_limit = limit;
  request->parent = static_cast<pid_t>(parent);
  request->has_cgroup = cgroup != 0;
  request->standby = standby != 0;
  const size_t pipes = request->standby ? 0u : request->has_cgroup ? 5u : 4u;
  if (fd_count != pipes) {
    return Status::RuntimeError(request->standby ? "standby request with descriptors"
                                                 : "fork request without its pipes");
  }
  return Status::Ok();
}

Status SendMessage(int socket, const std::string& text, int fd) {
  return SendWithFds(socket, text, fd >= 0 ? std::vector<int>{fd} : std::vector<int>{}, "send");
}

Status ReceiveMessage(int socket, int timeout_ms, std::string* text, UniqueFd* fd) {
  pollfd p{socket, POLLIN, 0};
  const int ready = RetryOnEintr([&] { return ::poll(&p, 1, timeout_ms); });
  if (ready < 0) return Status::RuntimeError(Errno("poll"));
  if (ready == 0) return Status::RuntimeError("no answer within " + std::to_string(timeout_ms / 1000) + " s");
  text->assign(4096, '\0');
  std::vector<UniqueFd> fds;
  bool truncated = false;
  const ssize_t n = ReceiveWithFds(socket, text, &fds, &truncated);
  if (n < 0 && errno != ECONNRESET) return Status::RuntimeError(Errno("recv"));
  // ECONNRESET: the other side died, like EOF (an empty text).
  if (fd && !fds.empty()) *fd = std::move(fds.front());
  return Status::Ok();
}

}  // namespace cleansweep
