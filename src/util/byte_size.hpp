// Memory sizes as written in configs ("512M", "8G", "1.5GiB", "2048" bytes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.hpp"

namespace cleansweep {

// A number with an optional unit: K, M, G, T (powers of 1024, with or without a trailing "B" or
// "iB", any case); a bare number is bytes. Fails on empty, negative, zero or unparsable text.
Result<std::int64_t> ParseByteSize(std::string_view text);

// "512 MiB", "8.0 GiB".
std::string FormatByteSize(std::int64_t bytes);

}  // namespace cleansweep
