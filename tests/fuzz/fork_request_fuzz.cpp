// Fuzz target: the fork server's request decoding (launch/fork_server_protocol), the bytes a
// worker sends; the first byte says how many descriptors came with them.
#include <cstdint>
#include <string>

#include "launch/fork_server_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  cleansweep::ForkRequest request;
  (void)cleansweep::DecodeForkRequest(body, data[0] % 8, &request);
  return 0;
}
