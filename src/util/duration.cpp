#include "util/duration.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cleansweep {
namespace {

// Milliseconds in one `unit`, or 0 for an unknown unit.
double UnitMillis(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s" || unit.empty()) return 1e3;
  if (unit == "m") return 60e3;
  if (unit == "h") return 3600e3;
  if (unit == "d") return 86400e3;
  return 0;
}

}  // namespace

Result<Millis> ParseDuration(std::string_view text) {
  const auto invalid = [&] {
    return Status::InvalidInput("'" + std::string(text) + "' is not a duration (write e.g. 90s, 10m, 2h, 1h30m)");
  };
  if (text.empty()) return invalid();
  double total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t number_start = pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
    if (pos == number_start) return invalid();
    const double number = std::strtod(std::string(text.substr(number_start, pos - number_start)).c_str(), nullptr);
    const size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    const std::string_view unit = text.substr(unit_start, pos - unit_start);
    const double scale = UnitMillis(unit);
    if (scale == 0) return invalid();
    // A bare number means seconds, but only on its own: "10s5" is a typo, not 15 seconds.
    if (unit.empty() && (number_start != 0 || pos != text.size())) return invalid();
    total += number * scale;
    if (!(total <= static_cast<double>(kMaxDuration.count()))) {
      return Status::InvalidInput("'" + std::string(text) +
                                  "' is longer than 3650d, the longest duration cleansweep accepts");
    }
  }
  return Millis(static_cast<Millis::rep>(std::llround(total)));
}

std::string FormatDuration(Millis duration) {
  const long long ms = duration.count();
  char buf[32];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", ms);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1e3);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", ms / 60'000, (ms / 1000) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", ms / 3'600'000, (ms / 60'000) % 60);
  }
  return buf;
}

}  // namespace cleansweep
