#include "samplers/sobol_sampler.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>

#include "util/random.hpp"

namespace cleansweep {
namespace {

// Primitive polynomials and initial direction numbers for dimensions 2..21, as published by Joe and
// Kuo (2008, "new-joe-kuo-6.21201"): degree s, coefficients a, and m_1..m_s.
struct Polynomial {
  int s;
  std::uint32_t a;
  std::array<std::uint32_t, 7> m;
};
constexpr Polynomial kPolynomials[SobolSampler::kMaxDimensions - 1] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
};

// Direction numbers v_1..v_32 of one dimension, bit 31 being the first binary digit.
std::array<std::uint32_t, 32> Directions(int dimension) {
  std::array<std::uint32_t, 32> v{};
  if (dimension == 0) {  // van der Corput
    for (int k = 0; k < 32; ++k) v[static_cast<size_t>(k)] = 1u << (31 - k);
    return v;
  }
  const Polynomial& p = kPolynomials[dimension - 1];
  for (int k = 0; k < p.s; ++k) v[static_cast<size_t>(k)] = p.m[static_cast<size_t>(k)] << (31 - k);
  for (int k = p.s; k < 32; ++k) {
    std::uint32_t x = v[static_cast<size_t>(k - p.s)] ^ (v[static_cast<size_t>(k - p.s)] >> p.s);
    for (int j = 1; j < p.s; ++j) {
      if ((p.a >> (p.s - 1 - j)) & 1u) x ^= v[static_cast<size_t>(k - j)];
    }
    v[static_cast<size_t>(k)] = x;
  }
  return v;
}

// Multiplies every direction number by a random lower-triangular binary matrix with a unit
// diagonal (digit i of the result mixes digits 0..i), which keeps the net property.
void LinearScramble(std::array<std::uint32_t, 32>* v, SplitMix64& rng) {
  std::array<std::uint32_t, 32> rows{};  // row i: which input digits feed output digit i
  for (int i = 0; i < 32; ++i) {
    const std::uint32_t own = 1u << (31 - i);
    const std::uint32_t earlier = i == 0 ? 0u : ~((1u << (32 - i)) - 1u);  // digits 0..i-1
    rows[static_cast<size_t>(i)] = own | (static_cast<std::uint32_t>(rng.Next()) & earlier);
  }
  for (std::uint32_t& d : *v) {
    std::uint32_t out = 0;
    for (int i = 0; i < 32; ++i) {
      if (std::bitset<32>(rows[static_cast<size_t>(i)] & d).count() % 2) out |= 1u << (31 - i);
    }
    d = out;
  }
}

}  // namespace

Result<std::unique_ptr<SobolSampler>> SobolSampler::Create(const SearchSpace& space, std::uint64_t seed,
                                                           bool scramble) {
  int dimensions = 0;
  for (const ParamSpec& spec : space.params()) dimensions += spec.kind == ParamKind::kFixed ? 0 : 1;
  if (dimensions > kMaxDimensions) {
    return Status::InvalidInput("space: the sobol sampler takes up to " + std::to_string(kMaxDimensions) +
                                " parameters, this space has " + std::to_string(dimensions) + "; use tpe or random");
  }
  auto sampler = std::unique_ptr<SobolSampler>(new SobolSampler());
  sampler->space_ = space;
  SplitMix64 rng(seed);
  for (int d = 0; d < dimensions; ++d) {
    sampler->directions_.push_back(Directions(d));
    if (scramble) LinearScramble(&sampler->directions_.back(), rng);
    sampler->shifts_.push_back(scramble ? static_cast<std::uint32_t>(rng.Next()) : 0u);
  }
  return sampler;
}

std::vector<double> SobolSampler::Point(std::uint64_t index) const {
  std::vector<double> x(directions_.size());
  for (size_t d = 0; d < directions_.size(); ++d) {
    std::uint32_t bits = shifts_[d];
    for (int k = 0; k < 32 && (index >> k) != 0; ++k) {
      if ((index >> k) & 1u) bits ^= directions_[d][static_cast<size_t>(k)];
    }
    x[d] = (static_cast<double>(bits) + 0.5) * 0x1.0p-32;
  }
  return x;
}

ParamSet SobolSampler::ParamsAt(const SearchSpace& space, const std::vector<double>& u) {
  ParamSet params;
  size_t d = 0;
  for (const ParamSpec& spec : space.params()) {
    if (spec.kind == ParamKind::kFixed) {
      if (SearchSpace::IsActive(spec, params)) params[spec.name] = spec.fixed_value;
      continue;
    }
    const double ud = std::min(u[d++], std::nextafter(1.0, 0.0));
    if (!SearchSpace::IsActive(spec, params)) continue;
    if (spec.kind == ParamKind::kCategorical) {
      params[spec.name] = spec.choices[static_cast<size_t>(ud * static_cast<double>(spec.choices.size()))];
    } else {
      params[spec.name] = SearchSpace::FromUnit(spec, ud);
    }
  }
  return params;
}

std::optional<ParamSet> SobolSampler::Ask(std::int64_t number, const TrialHistory& /*history*/) {
  return ParamsAt(space_, Point(static_cast<std::uint64_t>(number)));
}

}  // namespace cleansweep
