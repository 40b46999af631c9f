#include "space/trial_defined.hpp"

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace cleansweep {
namespace {

// Names as Optuna objectives write them (lr, n_units_l0, layer.1/units): letters, digits and
// _ . - / :, so that `param_<name>` stays a plain column name everywhere it goes.
bool IsTrialDefinedName(const std::string& name) {
  if (name.empty() || name.size() > kMaxTrialDefinedNameBytes) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-' || c == '/' || c == ':';
    if (!ok) return false;
  }
  return true;
}

Result<double> Bound(const nlohmann::json& request, const char* key, bool whole) {
  const auto it = request.find(key);
  if (it == request.end()) return Status::InvalidInput(std::string("needs ") + key);
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return Status::InvalidInput(std::string(key) + " must be a finite number, not " + Utf8Prefix(it->dump(), 40));
  }
  const double v = it->get<double>();
  if (std::abs(v) > kMaxTrialDefinedBound) {
    return Status::InvalidInput(std::string(key) + " " + it->dump() + " is beyond +-2^53, the largest magnitude a " +
                                "trial-defined bound may have");
  }
  if (whole && v != std::floor(v)) return Status::InvalidInput(std::string(key) + " must be a whole number");
  return v;
}

}  // namespace

Result<ParamSpec> ParseSuggestRequest(const nlohmann::json& request) {
  if (!request.is_object()) return Status::InvalidInput("suggest must be a JSON object");
  for (const auto& [key, v] : request.items()) {
    if (key != "name" && key != "type" && key != "low" && key != "high" && key != "log" && key != "step" &&
        key != "choices") {
      return Status::InvalidInput("suggest: unknown key '" + Utf8Prefix(key, 60) +
                                  "' (known: name, type, low, high, log, step, choices)");
    }
  }
  const auto name = request.find("name");
  if (name == request.end() || !name->is_string() || !IsTrialDefinedName(name->get<std::string>())) {
    return Status::InvalidInput("suggest: name must be 1 to " + std::to_string(kMaxTrialDefinedNameBytes) +
                                " letters, digits or _ . - / : (got " +
                                (name == request.end() ? std::string("none") : Utf8Prefix(name->dump(), 80)) + ")");
  }
  ParamSpec spec;
  spec.name = name->get<std::string>();
  const std::string what = "suggest '" + spec.name + "': ";
  const auto type = request.find("type");
  const std::string kind = type != request.end() && type->is_string() ? type->get<std::string>() : "";
  if (kind == "categorical") {
    for (const char* numeric : {"low", "high", "log", "step"}) {
      if (request.contains(numeric)) return Status::InvalidInput(what + "a categorical takes choices, not " + numeric);
    }
    const auto choices = request.find("choices");
    if (choices == request.end() || !choices->is_array() || choices->empty()) {
      return Status::InvalidInput(what + "choices must be a non-empty list");
    }
    spec.kind = ParamKind::kCategorical;
    for (const nlohmann::json& c : *choices) {
      if (c.is_boolean()) {
        spec.choices.emplace_back(c.get<bool>());
      } else if (c.is_number_integer()) {
        if (c.is_number_unsigned() ? c.get<std::uint64_t>() > (std::uint64_t{1} << 53)
                                   : std::abs(static_cast<double>(c.get<std::int64_t>())) > kMaxTrialDefinedBound) {
          return Status::InvalidInput(what + "the choice " + c.dump() + " is beyond +-2^53");
        }
        spec.choices.emplace_back(c.get<std::int64_t>());
      } else if (c.is_number() && std::isfinite(c.get<double>())) {
        spec.choices.emplace_back(c.get<double>());
      } else if (c.is_string() && c.get<std::string>().size() <= kMaxChoiceBytes) {
        spec.choices.emplace_back(c.get<std::string>());
      } else {
        return Status::InvalidInput(what + "a choice must be a finite number, a boolean or a text of at most " +
                                    std::to_string(kMaxChoiceBytes) + " bytes, not " + Utf8Prefix(c.dump(), 60) +
                                    " (None is not a choice here: use a text such as \"none\")");
      }
    }
  } else if (kind == "float" || kind == "int") {
    if (request.contains("choices"))
      return Status::InvalidInput(what + "a " + kind + " takes low and high, not choices");
    const bool whole = kind == "int";
    spec.kind = whole ? ParamKind::kInt : ParamKind::kFloat;
    CS_ASSIGN_OR_RETURN(spec.low, Bound(request, "low", whole));
    CS_ASSIGN_OR_RETURN(spec.high, Bound(request, "high", whole));
    if (spec.low > spec.high) {
      return Status::InvalidInput(what + "low " + spec.FormatNumber(spec.low) + " is above high " +
                                  spec.FormatNumber(spec.high));
    }
    if (const auto log = request.find("log"); log != request.end()) {
      if (!log->is_boolean()) return Status::InvalidInput(what + "log must be true or false");
      spec.log = log->get<bool>();
    }
    if (spec.log && spec.low <= 0) {
      return Status::InvalidInput(what + "a log range needs low > 0, not " + spec.FormatNumber(spec.low));
    }
    std::optional<double> step;
    if (const auto s = request.find("step"); s != request.end() && !s->is_null()) {
      CS_ASSIGN_OR_RETURN(const double given, Bound(request, "step", whole));
      if (!(given > 0)) return Status::InvalidInput(what + "step must be > 0");
      step = given;
    }
    if (whole && !step) step = 1;
    if (spec.log && step && (!whole || *step != 1)) {
      return Status::InvalidInput(what + "give log or a step, not both (as Optuna: a log int has step 1)");
    }
    if (step) {
      if ((spec.high - spec.low) / *step > kMaxTrialDefinedBound) {
        return Status::InvalidInput(what + "the step " + spec.FormatNumber(*step) + " makes more than 2^53 values");
      }
      // As Optuna does: a high off the grid comes down to the last value on it.
      const double count = std::floor((spec.high - spec.low) / *step + 1e-9);
      spec.high = spec.low + count * *step;
      spec.step = step;
    }
  } else {
    return Status::InvalidInput(what + "type must be float, int or categorical" +
                                (type == request.end() ? std::string() : ", not " + Utf8Prefix(type->dump(), 40)));
  }
  if (DistributionJson(spec).size() > kMaxDistributionBytes) {
    return Status::InvalidInput(what + "its distribution takes more than " + std::to_string(kMaxDistributionBytes) +
                                " bytes as JSON (many or long choices): declare it under space: in the config instead");
  }
  return spec;
}

std::string DistributionJson(const ParamSpec& spec) {
  nlohmann::json j;
  if (spec.kind == ParamKind::kCategorical) {
    j["type"] = "categorical";
    nlohmann::json choices = nlohmann::json::array();
    for (const ParamValue& c : spec.choices) choices.push_back(ToJson(c));
    j["choices"] = std::move(choices);
  } else if (spec.kind == ParamKind::kFixed) {
    j["type"] = "categorical";
    j["choices"] = nlohmann::json::array({ToJson(spec.fixed_value)});
  } else {
    const bool whole = spec.kind == ParamKind::kInt;
    j["type"] = whole ? "int" : "float";
    if (whole) {
      j["low"] = static_cast<std::int64_t>(spec.low);
      j["high"] = static_cast<std::int64_t>(spec.high);
    } else {
      j["low"] = spec.low;
      j["high"] = spec.high;
    }
    j["log"] = spec.log;
    const std::optional<double> step = whole ? std::optional<double>(spec.step.value_or(1)) : spec.step;
    if (step) {
      if (whole)
        j["step"] = static_cast<std::int64_t>(*step);
      else
        j["step"] = *step;
    }
  }
  return j.dump();
}

Result<ParamSpec> DistributionFromJson(const std::string& name, const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidInput("not a distribution: " + Utf8Prefix(text, 80));
  nlohmann::json request = j;
  request["name"] = name;
  return ParseSuggestRequest(request);
}

bool SameDistribution(const ParamSpec& a, const ParamSpec& b) {
  const auto kind = [](const ParamSpec& s) { return s.kind == ParamKind::kFixed ? ParamKind::kCategorical : s.kind; };
  if (kind(a) != kind(b)) return false;
  if (kind(a) == ParamKind::kCategorical) {
    const std::vector<ParamValue> ca = a.kind == ParamKind::kFixed ? std::vector<ParamValue>{a.fixed_value} : a.choices;
    const std::vector<ParamValue> cb = b.kind == ParamKind::kFixed ? std::vector<ParamValue>{b.fixed_value} : b.choices;
    if (ca.size() != cb.size()) return false;
    for (size_t i = 0; i < ca.size(); ++i) {
      const bool text_a = std::holds_alternative<std::string>(ca[i]),
                 text_b = std::holds_alternative<std::string>(cb[i]);
      if (text_a != text_b || !ValuesEqual(ca[i], cb[i])) return false;
    }
    return true;
  }
  const double step_a = a.step.value_or(a.kind == ParamKind::kInt ? 1 : 0);
  const double step_b = b.step.value_or(b.kind == ParamKind::kInt ? 1 : 0);
  return a.low == b.low && a.high == b.high && a.log == b.log && step_a == step_b;
}

std::string DescribeDistribution(const ParamSpec& spec) {
  if (spec.kind == ParamKind::kCategorical || spec.kind == ParamKind::kFixed) {
    const std::vector<ParamValue> choices =
        spec.kind == ParamKind::kFixed ? std::vector<ParamValue>{spec.fixed_value} : spec.choices;
    std::string list;
    for (const ParamValue& c : choices) list += (list.empty() ? "" : ", ") + FormatValue(c);
    return std::string(spec.kind == ParamKind::kFixed ? "fixed" : "categorical") + " of [" + list + "]";
  }
  std::string out = std::string(spec.kind == ParamKind::kInt ? "int" : "float") + " in [" +
                    spec.FormatNumber(spec.low) + ", " + spec.FormatNumber(spec.high) + "]";
  if (spec.log) out += ", log";
  if (spec.step && !(spec.kind == ParamKind::kInt && *spec.step == 1)) out += " step " + spec.FormatNumber(*spec.step);
  return out;
}

}  // namespace cleansweep
