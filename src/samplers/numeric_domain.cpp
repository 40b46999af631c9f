#include "samplers/numeric_domain.hpp"

#include <cmath>

#include "space/search_space.hpp"

namespace cleansweep {

NumericDomain NumericDomain::For(const ParamSpec& spec) {
  NumericDomain d;
  d.integer = spec.kind == ParamKind::kInt;
  d.log = spec.log;
  const double step = spec.step.value_or(d.integer ? 1.0 : 0.0);
  if (d.log) {
    // Log ints keep half a unit on each side so both end values get their share.
    d.low = std::log(d.integer ? spec.low - 0.5 : spec.low);
    d.high = std::log(d.integer ? spec.high + 0.5 : spec.high);
  } else if (step > 0) {
    d.step = step;
    d.low = spec.low - step / 2;
    d.high = spec.low + (std::floor((spec.high - spec.low) / step + 1e-9) + 0.5) * step;
  } else {
    d.low = spec.low;
    d.high = spec.high;
  }
  return d;
}

double NumericDomain::Encode(const ParamValue& value) const {
  const double x = AsNumber(value);
  return log ? std::log(x) : x;
}

ParamValue NumericDomain::Decode(const ParamSpec& spec, double x) const {
  x = std::min(std::max(x, low), high);
  const double v = log ? std::exp(x) : x;
  const double snapped = SearchSpace::Snap(spec, v);
  if (integer) return static_cast<std::int64_t>(std::llround(snapped));
  return snapped;
}

std::optional<int> ChoiceIndex(const ParamSpec& spec, const ParamValue& value) {
  if (spec.kind == ParamKind::kFixed) return 0;
  for (size_t i = 0; i < spec.choices.size(); ++i) {
    if (ValuesEqual(spec.choices[i], value)) return static_cast<int>(i);
  }
  return std::nullopt;
}

}  // namespace cleansweep
