#include "util/byte_size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cleansweep {

Result<std::int64_t> ParseByteSize(std::string_view text) {
  const std::string s(text);
  const auto bad = [&] {
    return Status::InvalidInput("'" + s + "' is not a memory size; write it like 512M, 8G or 1.5GiB");
  };
  if (s.empty() || s[0] == '-' || s[0] == '+') return bad();
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(number) || number <= 0) return bad();
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (!unit.empty()) {
    const std::string prefixes = "KMGT";
    const size_t at = prefixes.find(unit[0]);
    if (at == std::string::npos) {
      if (unit != "B") return bad();
    } else {
      scale = std::pow(1024.0, static_cast<double>(at + 1));
      const std::string rest = unit.substr(1);
      if (!rest.empty() && rest != "B" && rest != "IB") return bad();
    }
  }
  const double bytes = number * scale;
  if (bytes < 1 || bytes > 9.0e18) return bad();
  return static_cast<std::int64_t>(bytes);
}

std::string FormatByteSize(std::int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || value == std::floor(value)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", value, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  }
  return buf;
}

}  // namespace cleansweep
