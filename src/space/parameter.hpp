// One dimension of a search space, as declared under `space:` in a config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trial/param_value.hpp"

namespace cleansweep {

enum class ParamKind { kFloat, kInt, kCategorical, kFixed };

const char* ParamKindName(ParamKind kind);

// `when: {optimizer: [sgd, adam]}`: active when `parent` is active and equals one of `values`.
struct Condition {
  std::string parent;
  std::vector<ParamValue> values;
};

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kFloat;
  // Float and int bounds, inclusive. Ints are whole numbers held as doubles (exact below 2^53).
  double low = 0;
  double high = 0;
  bool log = false;
  std::optional<double> step;       // float: optional quantum; int: defaults to 1
  std::vector<ParamValue> choices;  // categorical
  ParamValue fixed_value;           // fixed
  std::vector<Condition> when;      // all must hold (AND)
  std::vector<ParamValue> grid;     // explicit grid values for the grid sampler
  int grid_points = 0;              // or: this many evenly spaced points (log-spaced if log)
  int line = 0;                     // where it was declared, for messages (0 if unknown)

  // A bound or step of this parameter as text: whole for an int ("8"), exact for a float ("8.0").
  std::string FormatNumber(double v) const;
};

}  // namespace cleansweep
