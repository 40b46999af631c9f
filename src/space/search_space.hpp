// A validated search space: parameters in an order where every `when` parent comes first.
#pragma once

#include <string>
#include <vector>

#include "space/parameter.hpp"

namespace cleansweep {

class SearchSpace {
 public:
  // Orders `params` so that parents precede children. Fails on unknown parents or cycles;
  // the message names the parameter. Bounds are checked by the config parser, not here.
  static Result<SearchSpace> Create(std::vector<ParamSpec> params);

  const std::vector<ParamSpec>& params() const { return params_; }
  const ParamSpec* Find(const std::string& name) const;

  // True when every condition of `spec` holds for the values in `partial` (parents first).
  static bool IsActive(const ParamSpec& spec, const ParamSet& partial);

  // True when `spec` can be inactive in some trial.
  static bool IsConditional(const ParamSpec& spec) { return !spec.when.empty(); }

  // Maps `u` in [0, 1) onto the parameter's range (log/step/int aware). Float and int only.
  static ParamValue FromUnit(const ParamSpec& spec, double u);

  // Rounds onto the step grid and clamps into [low, high]. Float and int only.
  static double Snap(const ParamSpec& spec, double x);

  // `value` as this parameter stores it (ints as int64, floats as double), or an explanation of
  // why it is not a value of the parameter (out of range, off the step, not a choice).
  static Result<ParamValue> Normalize(const ParamSpec& spec, const ParamValue& value);

  // Completes `fixed` (some parameters' values) into a whole trial: in dependency order, each
  // active parameter takes its value from `fixed`, else from `proposal`, else from `fallback`.
  // Parameters that are inactive given the result are left out.
  static ParamSet Complete(const SearchSpace& space, const ParamSet& fixed, const ParamSet& proposal,
                           const ParamSet& fallback);

  // One line per parameter, as `cleansweep validate` prints it.
  std::string Describe() const;

 private:
  std::vector<ParamSpec> params_;
};

}  // namespace cleansweep
