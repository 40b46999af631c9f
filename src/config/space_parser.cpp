#include "config/space_parser.hpp"

#include "config/study_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace cleansweep {

bool IsIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

namespace {

Result<std::vector<ParamValue>> ScalarList(const YamlReader& r, const YAML::Node& node, const std::string& key,
                                           bool allow_single) {
  std::vector<ParamValue> values;
  if (allow_single && node.IsScalar()) {
    Result<ParamValue> v = r.Scalar(node, key);
    if (!v.ok()) return v.status();
    values.push_back(*v);
    return values;
  }
  if (!node.IsSequence()) return r.Error(node, key, "expected a list of values, e.g. [a, b]");
  for (size_t i = 0; i < node.size(); ++i) {
    Result<ParamValue> v = r.Scalar(node[i], key + "[" + std::to_string(i) + "]");
    if (!v.ok()) return v.status();
    values.push_back(*v);
  }
  return values;
}

Status ParseBounds(const YamlReader& r, const YAML::Node& node, const std::string& key, ParamSpec* spec) {
  const bool is_int = spec->kind == ParamKind::kInt;
  for (const char* bound : {"low", "high"}) {
    if (!node[bound]) return r.Error(node, key, std::string("missing `") + bound + "` (the range is [low, high])");
    if (is_int) {
      Result<std::int64_t> v = r.Integer(node[bound], key + "." + bound);
      if (!v.ok()) return v.status();
      (bound[0] == 'l' ? spec->low : spec->high) = static_cast<double>(*v);
    } else {
      Result<double> v = r.Number(node[bound], key + "." + bound);
      if (!v.ok()) return v.status();
      (bound[0] == 'l' ? spec->low : spec->high) = *v;
    }
  }
  if (spec->low >= spec->high) {
    return r.Error(node["low"], key + ".low",
                   "low must be below high, got low " + spec->FormatNumber(spec->low) + " >= high " +
                       spec->FormatNumber(spec->high) + " (for a constant, use `type: fixed`)");
  }
  if (node["log"]) {
    Result<bool> log = r.Bool(node["log"], key + ".log");
    if (!log.ok()) return log.status();
    spec->log = *log;
  }
  if (spec->log && spec->low <= 0) {
    return r.Error(node["low"], key + ".low", "a log scale needs low > 0, got " + spec->FormatNumber(spec->low));
  }
  if (node["step"]) {
    Result<double> step = is_int ? Result<double>(0.0) : r.Number(node["step"], key + ".step");
    if (is_int) {
      Result<std::int64_t> s = r.Integer(node["step"], key + ".step");
      if (!s.ok()) return s.status();
      step = static_cast<double>(*s);
    }
    if (!step.ok()) return step.status();
    if (*step <= 0) return r.Error(node["step"], key + ".step", "step must be > 0");
    if (spec->log && !(is_int && *step == 1)) {
      return r.Error(node["step"], key + ".step", "step and log cannot be combined");
    }
    // A step that does not divide the range would make `high` unreachable without saying so.
    const double steps = (spec->high - spec->low) / *step;
    if (std::abs(steps - std::round(steps)) > 1e-9 * std::max(1.0, steps)) {
      const auto near = [](double x) {  // 0.8999999999999999 reads better as 0.9
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.12g", x);
        return std::string(buf);
      };
      const std::string below = near(spec->low + std::floor(steps) * *step);
      const std::string above = near(spec->low + std::ceil(steps) * *step);
      const auto show = [&](double x) { return spec->FormatNumber(x); };
      return r.Error(node["step"], key + ".step",
                     "step " + show(*step) + " does not divide [" + show(spec->low) + ", " + show(spec->high) +
                         "]: the high end would never be sampled; use high " + below + " or " + above +
                         ", or another step");
    }
    spec->step = *step;
  }
  return Status::Ok();
}

Status ParseGrid(const YamlReader& r, const YAML::Node& node, const std::string& key, ParamSpec* spec) {
  if (node["grid"]) {
    Result<std::vector<ParamValue>> values = ScalarList(r, node["grid"], key + ".grid", false);
    if (!values.ok()) return values.status();
    if (values->empty()) return r.Error(node["grid"], key + ".grid", "the grid list is empty");
    for (const ParamValue& v : *values) {
      const double x = AsNumber(v);
      if (std::isnan(x) || x < spec->low || x > spec->high) {
        return r.Error(node["grid"], key + ".grid",
                       "grid value " + FormatValue(v) + " is not a number within [low, high]");
      }
      if (spec->kind == ParamKind::kInt && x != std::round(x)) {
        return r.Error(node["grid"], key + ".grid", "grid value " + FormatValue(v) + " is not whole");
      }
      spec->grid.push_back(spec->kind == ParamKind::kInt ? ParamValue(static_cast<std::int64_t>(x)) : ParamValue(x));
    }
  }
  if (node["grid_points"]) {
    Result<std::int64_t> n = r.Integer(node["grid_points"], key + ".grid_points");
    if (!n.ok()) return n.status();
    if (*n < 2 || *n > 100000)
      return r.Error(node["grid_points"], key + ".grid_points", "must be between 2 and 100000");
    spec->grid_points = static_cast<int>(*n);
  }
  return Status::Ok();
}

Status ParseWhen(const YamlReader& r, const YAML::Node& node, const std::string& key, ParamSpec* spec) {
  if (!node.IsMap() || node.size() == 0) {
    return r.Error(node, key, "expected a mapping such as {optimizer: sgd} or {optimizer: [sgd, adam]}");
  }
  for (const auto& item : node) {
    Condition c;
    c.parent = item.first.Scalar();
    Result<std::vector<ParamValue>> values = ScalarList(r, item.second, key + "." + c.parent, true);
    if (!values.ok()) return values.status();
    c.values = std::move(*values);
    spec->when.push_back(std::move(c));
  }
  return Status::Ok();
}

Result<ParamSpec> ParseParam(const YamlReader& r, const std::string& name, const YAML::Node& node) {
  const std::string key = "space." + name;
  ParamSpec spec;
  spec.name = name;
  spec.line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
  if (!node.IsMap()) {  // `lr: 0.01` is a fixed value
    Result<ParamValue> v = r.Scalar(node, key);
    if (!v.ok()) return v.status();
    spec.kind = ParamKind::kFixed;
    spec.fixed_value = *v;
    return spec;
  }
  if (!node["type"]) return r.Error(node, key, "missing `type` (float, int, categorical or fixed)");
  Result<std::string> type = r.String(node["type"], key + ".type");
  if (!type.ok()) return type.status();
  Status status;
  if (*type == "float" || *type == "int") {
    spec.kind = *type == "int" ? ParamKind::kInt : ParamKind::kFloat;
    status = r.CheckKeys(node, key, {"type", "low", "high", "log", "step", "when", "grid", "grid_points"});
    if (status.ok()) status = ParseBounds(r, node, key, &spec);
    if (status.ok()) status = ParseGrid(r, node, key, &spec);
  } else if (*type == "categorical") {
    spec.kind = ParamKind::kCategorical;
    status = r.CheckKeys(node, key, {"type", "choices", "when"});
    if (status.ok() && !node["choices"]) status = r.Error(node, key, "missing `choices` (a list of values)");
    if (status.ok()) {
      Result<std::vector<ParamValue>> choices = ScalarList(r, node["choices"], key + ".choices", false);
      if (!choices.ok()) return choices.status();
      if (choices->empty()) return r.Error(node["choices"], key + ".choices", "needs at least one choice");
      for (size_t i = 0; i < choices->size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (ValuesEqual((*choices)[i], (*choices)[j])) {
            return r.Error(node["choices"], key + ".choices",
                           "choice " + FormatValue((*choices)[i]) + " appears twice");
          }
        }
      }
      spec.choices = std::move(*choices);
    }
  } else if (*type == "fixed") {
    spec.kind = ParamKind::kFixed;
    status = r.CheckKeys(node, key, {"type", "value", "when"});
    if (status.ok() && !node["value"]) status = r.Error(node, key, "missing `value`");
    if (status.ok()) {
      Result<ParamValue> v = r.Scalar(node["value"], key + ".value");
      if (!v.ok()) return v.status();
      spec.fixed_value = *v;
    }
  } else {
    return r.Error(node["type"], key + ".type",
                   "unknown type '" + *type + "' (allowed: float, int, categorical, fixed)");
  }
  if (status.ok() && node["when"]) status = ParseWhen(r, node["when"], key + ".when", &spec);
  if (!status.ok()) return status;
  return spec;
}

}  // namespace

Result<SearchSpace> ParseSpace(const YamlReader& reader, const YAML::Node& node) {
  // None declared: the trial defines its parameters as it runs (trial.suggest_*, define-by-run).
  if (!node || node.IsNull() || (node.IsMap() && node.size() == 0)) return SearchSpace::Create({});
  CS_RETURN_IF_ERROR(reader.ExpectMap(node, "space"));
  std::vector<ParamSpec> params;
  for (const auto& item : node) {
    const std::string name = item.first.Scalar();
    if (!IsIdentifier(name)) {
      return reader.Error(item.first, "space." + name,
                          "parameter names use letters, digits and _ and do not start with a digit");
    }
    if (name == kPlaceholderTrial || name == kPlaceholderTrialDir) {
      return reader.Error(item.first, "space." + name, "'" + name + "' is reserved for a built-in placeholder");
    }
    Result<ParamSpec> spec = ParseParam(reader, name, item.second);
    if (!spec.ok()) return spec.status();
    params.push_back(std::move(*spec));
  }
  Result<SearchSpace> space = SearchSpace::Create(params);
  if (!space.ok()) {
    return reader.Error(node, "space", space.status().message());
  }
  return space;
}

}  // namespace cleansweep
