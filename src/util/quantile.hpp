// Quantiles of measurements for the lines people read (commit times, idle gaps): nearest rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cleansweep {

// The q-quantile (0 <= q <= 1) of `sorted`, ascending and not empty: the value at rank
// floor(q * n), the last one for q = 1.
inline double NearestRankQuantile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<size_t>(q * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, rank)];
}

}  // namespace cleansweep
