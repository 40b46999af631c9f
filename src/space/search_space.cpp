#include "space/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

namespace cleansweep {

std::string ParamSpec::FormatNumber(double v) const {
  return kind == ParamKind::kInt ? std::to_string(std::llround(v)) : FormatValue(v);
}

const char* ParamKindName(ParamKind kind) {
  switch (kind) {
    case ParamKind::kFloat:
      return "float";
    case ParamKind::kInt:
      return "int";
    case ParamKind::kCategorical:
      return "categorical";
    case ParamKind::kFixed:
      return "fixed";
  }
  return "?";
}

Result<SearchSpace> SearchSpace::Create(std::vector<ParamSpec> params) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < params.size(); ++i) index[params[i].name] = i;
  for (const ParamSpec& spec : params) {
    for (const Condition& c : spec.when) {
      if (!index.count(c.parent)) {
        return Status::InvalidInput("parameter '" + spec.name + "': `when` names '" + c.parent +
                                    "', which is not a parameter of this space");
      }
      if (c.parent == spec.name) {
        return Status::InvalidInput("parameter '" + spec.name + "': `when` names itself");
      }
    }
  }
  // Depth-first topological order that keeps declaration order where it can.
  enum Mark { kNew, kVisiting, kDone };
  std::vector<Mark> mark(params.size(), kNew);
  SearchSpace space;
  std::string cycle;
  std::function<bool(size_t)> visit = [&](size_t i) {
    if (mark[i] == kDone) return true;
    if (mark[i] == kVisiting) {
      cycle = params[i].name;
      return false;
    }
    mark[i] = kVisiting;
    for (const Condition& c : params[i].when) {
      if (!visit(index[c.parent])) return false;
    }
    mark[i] = kDone;
    space.params_.push_back(params[i]);
    return true;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    if (!visit(i)) {
      return Status::InvalidInput("parameter '" + cycle + "': its `when` conditions form a cycle");
    }
  }
  return space;
}

const ParamSpec* SearchSpace::Find(const std::string& name) const {
  for (const ParamSpec& spec : params_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool SearchSpace::IsActive(const ParamSpec& spec, const ParamSet& partial) {
  for (const Condition& c : spec.when) {
    const auto it = partial.find(c.parent);
    if (it == partial.end()) return false;
    const bool matched =
        std::any_of(c.values.begin(), c.values.end(), [&](const ParamValue& v) { return ValuesEqual(v, it->second); });
    if (!matched) return false;
  }
  return true;
}

double SearchSpace::Snap(const ParamSpec& spec, double x) {
  const double step = spec.step.value_or(spec.kind == ParamKind::kInt ? 1.0 : 0.0);
  if (step > 0) x = spec.low + std::round((x - spec.low) / step) * step;
  if (x > spec.high) x = step > 0 ? spec.high - std::fmod(spec.high - spec.low, step) : spec.high;
  return std::max(x, spec.low);
}

ParamValue SearchSpace::FromUnit(const ParamSpec& spec, double u) {
  double x;
  if (spec.kind == ParamKind::kInt) {
    // Widen by half a unit on each side so that both end points are as likely as inner values.
    const double lo = spec.low - 0.5, hi = spec.high + 0.5;
    x = spec.log ? std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))) : lo + u * (hi - lo);
    return static_cast<std::int64_t>(std::llround(Snap(spec, x)));
  }
  x = spec.log ? std::exp(std::log(spec.low) + u * (std::log(spec.high) - std::log(spec.low)))
               : spec.low + u * (spec.high - spec.low);
  return Snap(spec, x);
}

Result<ParamValue> SearchSpace::Normalize(const ParamSpec& spec, const ParamValue& value) {
  const double x = AsNumber(value);
  const bool number = std::holds_alternative<std::int64_t>(value) || std::holds_alternative<double>(value);
  switch (spec.kind) {
    case ParamKind::kCategorical:
      for (const ParamValue& choice : spec.choices) {
        if (ValuesEqual(choice, value)) return choice;
      }
      return Status::InvalidInput(FormatValue(value) + " is not one of the choices");
    case ParamKind::kFixed:
      if (ValuesEqual(spec.fixed_value, value)) return spec.fixed_value;
      return Status::InvalidInput("the parameter is fixed at " + FormatValue(spec.fixed_value));
    case ParamKind::kFloat:
    case ParamKind::kInt:
      break;
  }
  if (!number || x < spec.low || x > spec.high) {
    return Status::InvalidInput(FormatValue(value) + " is not a number in [" + spec.FormatNumber(spec.low) + ", " +
                                spec.FormatNumber(spec.high) + "]");
  }
  const double step = spec.step.value_or(spec.kind == ParamKind::kInt ? 1.0 : 0.0);
  if (step > 0 && std::abs(Snap(spec, x) - x) > 1e-9 * std::max(1.0, std::abs(x))) {
    return Status::InvalidInput(FormatValue(value) + " is not on the step " + spec.FormatNumber(step) + " from " +
                                spec.FormatNumber(spec.low));
  }
  if (spec.kind == ParamKind::kInt) return ParamValue(static_cast<std::int64_t>(std::llround(x)));
  return ParamValue(x);
}

ParamSet SearchSpace::Complete(const SearchSpace& space, const ParamSet& fixed, const ParamSet& proposal,
                               const ParamSet& fallback) {
  ParamSet out;
  for (const ParamSpec& spec : space.params()) {
    if (!IsActive(spec, out)) continue;
    for (const ParamSet* source : {&fixed, &proposal, &fallback}) {
      const auto it = source->find(spec.name);
      if (it != source->end()) {
        out[spec.name] = it->second;
        break;
      }
    }
  }
  return out;
}

std::string SearchSpace::Describe() const {
  std::ostringstream out;
  for (const ParamSpec& spec : params_) {
    out << "  " << spec.name << ": " << ParamKindName(spec.kind);
    switch (spec.kind) {
      case ParamKind::kFloat:
      case ParamKind::kInt:
        out << " [" << spec.FormatNumber(spec.low) << ", " << spec.FormatNumber(spec.high) << "]";
        if (spec.log) out << " log";
        if (spec.step) out << " step " << spec.FormatNumber(*spec.step);
        break;
      case ParamKind::kCategorical: {
        out << " {";
        for (size_t i = 0; i < spec.choices.size(); ++i) {
          out << (i ? ", " : "") << FormatValue(spec.choices[i]);
        }
        out << "}";
        break;
      }
      case ParamKind::kFixed:
        out << " = " << FormatValue(spec.fixed_value);
        break;
    }
    for (const Condition& c : spec.when) {
      out << "  when " << c.parent << " in {";
      for (size_t i = 0; i < c.values.size(); ++i) out << (i ? ", " : "") << FormatValue(c.values[i]);
      out << "}";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace cleansweep
