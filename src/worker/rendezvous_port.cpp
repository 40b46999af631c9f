#include "worker/rendezvous_port.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cleansweep {

Result<RendezvousPort> RendezvousPort::Reserve() {
  RendezvousPort reserved;
  reserved.socket_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const auto fail = [](const char* what) {
    return Status::IoError(std::string("cannot reserve a port for MASTER_PORT: ") + what + ": " + std::strerror(errno));
  };
  if (!reserved.socket_.valid()) return fail("socket");
  const int on = 1;
  if (::setsockopt(reserved.socket_.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) return fail("SO_REUSEADDR");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;  // the kernel picks a free one
  if (::bind(reserved.socket_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return fail("bind");
  }
  socklen_t length = sizeof address;
  if (::getsockname(reserved.socket_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return fail("getsockname");
  }
  reserved.port_ = ntohs(address.sin_port);
  return reserved;
}

std::string ReachableAddress() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) == 0) {
    ::freeaddrinfo(found);
    return name;
  }
  return "127.0.0.1";
}

}  // namespace cleansweep
