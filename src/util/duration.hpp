// Human durations as written in configs ("90s", "10m", "2h", "1h30m", "250ms").
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/status.hpp"

namespace cleansweep {

using Millis = std::chrono::milliseconds;

// The longest duration accepted (ten years): longer ones are typos, and past ~292 million years
// the milliseconds would not fit in 64 bits.
inline constexpr Millis kMaxDuration = std::chrono::hours(24 * 3650);

// Accepts one or more <number><unit> groups, unit one of ms, s, m, h, d; a bare number means
// seconds. Fails on empty, negative, unparsable text and anything past kMaxDuration.
Result<Millis> ParseDuration(std::string_view text);

// Compact rendering for progress lines: "850ms", "42s", "3m05s", "2h10m".
std::string FormatDuration(Millis duration);

}  // namespace cleansweep
