// The value of one hyperparameter in one trial, and a trial's set of values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include <nlohmann/json_fwd.hpp>

#include "util/status.hpp"

namespace cleansweep {

using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

// Active parameters of one trial by name. Inactive conditional parameters are absent.
using ParamSet = std::map<std::string, ParamValue>;

// Text form used in command placeholders and tables: 0.001, 64, adam, true.
std::string FormatValue(const ParamValue& value);

// Equality where an int and a double compare by numeric value (a `when: {blocks: 2}` matches 2.0).
bool ValuesEqual(const ParamValue& a, const ParamValue& b);

// Numeric view of a value (bools as 0/1); NaN for strings.
double AsNumber(const ParamValue& value);

nlohmann::json ToJson(const ParamValue& value);
nlohmann::json ToJson(const ParamSet& params);
// Fails on anything but an object of scalars.
Result<ParamSet> ParamSetFromJson(const nlohmann::json& json);

}  // namespace cleansweep
