// Where model-based samplers work: each float or int parameter as an interval of the real line
// (log-transformed for log parameters), each categorical one as an index. Pure functions.
#pragma once

#include <optional>

#include "space/parameter.hpp"

namespace cleansweep {

struct NumericDomain {
  double low = 0;  // transformed bounds; ints and stepped floats widened by half a step
  double high = 1;
  double step = 0;  // > 0: the transformed value lives on low + step/2 + k*step (linear steps)
  bool log = false;
  bool integer = false;

  static NumericDomain For(const ParamSpec& spec);

  double Encode(const ParamValue& value) const;              // parameter value -> transformed
  ParamValue Decode(const ParamSpec& spec, double x) const;  // transformed -> a valid value
  double width() const { return high - low; }
};

// The index of `value` among a categorical parameter's choices (or 0 for a fixed one); nullopt if
// it is not one of them.
std::optional<int> ChoiceIndex(const ParamSpec& spec, const ParamValue& value);

}  // namespace cleansweep
