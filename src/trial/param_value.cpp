#include "trial/param_value.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "util/number_format.hpp"

namespace cleansweep {

std::string FormatValue(const ParamValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return FormatDouble(d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, value);
}

double AsNumber(const ParamValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1.0 : 0.0;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

bool ValuesEqual(const ParamValue& a, const ParamValue& b) {
  const bool a_num = std::holds_alternative<std::int64_t>(a) || std::holds_alternative<double>(a);
  const bool b_num = std::holds_alternative<std::int64_t>(b) || std::holds_alternative<double>(b);
  if (a_num && b_num) return AsNumber(a) == AsNumber(b);
  return a == b;
}

nlohmann::json ToJson(const ParamValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

nlohmann::json ToJson(const ParamSet& params) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : params) object[name] = ToJson(value);
  return object;
}

Result<ParamSet> ParamSetFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::InvalidInput("parameters must be a JSON object");
  ParamSet params;
  for (const auto& [name, value] : json.items()) {
    if (value.is_boolean()) {
      params[name] = value.get<bool>();
    } else if (value.is_number_integer()) {
      params[name] = value.get<std::int64_t>();
    } else if (value.is_number()) {
      params[name] = value.get<double>();
    } else if (value.is_string()) {
      params[name] = value.get<std::string>();
    } else {
      return Status::InvalidInput("parameter '" + name + "' is not a scalar");
    }
  }
  return params;
}

}  // namespace cleansweep
