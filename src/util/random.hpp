// A small, portable PRNG. The standard distributions are implementation-defined, so a seeded sweep
// would differ between standard libraries; these functions give the same numbers everywhere.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace cleansweep {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Standard normal (Box-Muller; one of the pair is dropped to keep the stream stateless).
  double Normal() {
    const double u1 = std::max(Uniform(), 1e-300), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // Uniform in [0, n) for n > 0 (Lemire's multiply-shift; bias below 2^-64 * n).
  std::uint64_t Below(std::uint64_t n) {
    __extension__ using U128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<U128>(Next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

// An independent stream for (seed, index), e.g. one per trial number.
inline SplitMix64 StreamFor(std::uint64_t seed, std::uint64_t index) {
  SplitMix64 mix(seed ^ (index * 0xd1b54a32d192ed03ULL));
  return SplitMix64(mix.Next());
}

}  // namespace cleansweep
