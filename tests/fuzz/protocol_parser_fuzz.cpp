// Fuzz target: the trial report protocol (launch/protocol_parser), the bytes a trial writes on fd 3.
// The first byte chooses how the rest is split into reads, as a pipe would deliver it.
#include <cstdint>
#include <vector>

#include "launch/protocol_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  cleansweep::ProtocolParser parser;
  std::vector<cleansweep::StepValue> steps;
  for (size_t at = 1; at < size; at += chunk) {
    parser.Feed(reinterpret_cast<const char*>(data) + at, std::min(chunk, size - at), &steps);
  }
  parser.Finish(&steps);
  // What the worker does next with a result: attrs become a JSON text in the study file.
  (void)parser.attrs().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
