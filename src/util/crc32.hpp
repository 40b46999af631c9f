// CRC-32 (IEEE 802.3, the one zlib and Python's zlib.crc32 compute), for checking text that HDF5
// keeps without a checksum of its own.
#pragma once

#include <cstdint>
#include <string_view>

namespace cleansweep {

std::uint32_t Crc32(std::string_view data);

}  // namespace cleansweep
