#include "launch/protocol_parser.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "space/trial_defined.hpp"
#include "util/json_limits.hpp"
#include "util/utf8.hpp"

namespace cleansweep {
namespace {

bool IsFiniteNumber(const nlohmann::json& j) { return j.is_number() && std::isfinite(j.get<double>()); }

}  // namespace

std::string ProtocolParser::MetricList() const {
  std::string list;
  for (const std::string& m : metrics_) list += (list.empty() ? "" : ", ") + m;
  return list;
}

bool ProtocolParser::ReadValues(const nlohmann::json& values, std::vector<double>* out) {
  if (!values.is_object()) {
    Fail("values must be a JSON object of metric names and numbers");
    return false;
  }
  out->assign(metrics_.size(), std::numeric_limits<double>::quiet_NaN());
  for (const auto& [name, v] : values.items()) {
    const auto it = std::find(metrics_.begin(), metrics_.end(), name);
    if (it == metrics_.end()) {
      Fail("unknown metric '" + Utf8Prefix(name, 100) + "' (this study's reported metrics: " + MetricList() + ")");
      return false;
    }
    if (!IsFiniteNumber(v)) {
      Fail("metric '" + name + "' must be a finite number");
      return false;
    }
    (*out)[static_cast<size_t>(it - metrics_.begin())] = v.get<double>();
  }
  return true;
}

std::optional<std::int64_t> ProtocolParser::ReadStep(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
    Fail(std::string(key) + " must be a whole number >= 0");
    return std::nullopt;
  }
  // Unsigned first: a number past INT64_MAX must not wrap to a negative one.
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxStep)
                             : v.get<std::int64_t>() > kMaxStep) {
    Fail(std::string(key) + " " + v.dump() + " is above the largest step a trial may report, " +
         std::to_string(kMaxStep) + " (2^53 - 1)");
    return std::nullopt;
  }
  return v.get<std::int64_t>();
}

void ProtocolParser::Fail(const std::string& message) {
  if (!error_) error_ = "report line " + std::to_string(line_number_) + ": " + message;
}

void ProtocolParser::Feed(const char* data, size_t size, std::vector<StepValue>* steps) {
  if (error_) return;
  pending_.append(data, size);
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
    ParseLine(pending_.substr(start, nl - start), steps);
    if (error_) return;
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLineBytes) {
    ++line_number_;
    Fail("longer than " + std::to_string(kMaxLineBytes) + " bytes without a newline");
  }
}

void ProtocolParser::Finish(std::vector<StepValue>* steps) {
  if (!error_ && !pending_.empty()) ParseLine(pending_, steps);
  pending_.clear();
}

void ProtocolParser::ParseLine(const std::string& line, std::vector<StepValue>* steps) {
  ++line_number_;
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // blank lines are harmless
  // Depth first: a line nested 100,000 deep parses, but copying or dumping it overflows the stack.
  if (const Status depth = CheckJsonDepth(line); !depth.ok()) return Fail(depth.message());
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Fail("not a JSON object: " + Utf8Prefix(line, 200));
  for (const auto& [key, v] : j.items()) {
    if (key != "value" && key != "values" && key != "step" && key != "attrs" && key != "oom" && key != "message" &&
        key != "checkpoint" && key != "suggest" && key != "pruned") {
      return Fail("unknown key '" + Utf8Prefix(key, 100) +
                  "' (known: value, values, step, attrs, oom, message, checkpoint, suggest, pruned)");
    }
  }
  if (j.contains("suggest")) {  // a line of its own: the trial waits for the answer
    if (j.size() > 1) return Fail("a suggest request is a line of its own, without other keys");
    if (++suggests_ > kMaxSuggestRequests) {
      return Fail("more than " + std::to_string(kMaxSuggestRequests) +
                  " suggest requests (ask each parameter once; the helpers keep its value)");
    }
    Result<ParamSpec> spec = ParseSuggestRequest(j["suggest"]);
    if (!spec.ok()) return Fail(spec.status().message());
    if (asked_.insert(spec->name).second && asked_.size() > kMaxTrialDefinedParams) {
      return Fail("asks for more than " + std::to_string(kMaxTrialDefinedParams) + " parameters ('" + spec->name +
                  "' would be the " + std::to_string(asked_.size()) + "th)");
    }
    StepValue request;
    request.suggest = std::move(*spec);
    steps->push_back(std::move(request));
    return;
  }
  if (j.contains("pruned")) {
    const nlohmann::json& why = j["pruned"];
    if (!why.is_string() && !why.is_boolean()) return Fail("pruned must be a text (why) or true");
    if (why.is_string() || why.get<bool>()) pruned_ = why.is_string() ? Utf8Prefix(why.get<std::string>(), 200) : "";
  }
  std::optional<std::int64_t> checkpoint;
  if (j.contains("checkpoint")) {
    checkpoint = ReadStep(j, "checkpoint");
    if (!checkpoint) return;
    if (*checkpoint < last_checkpoint_) {
      return Fail("checkpoint " + std::to_string(*checkpoint) + " comes after checkpoint " +
                  std::to_string(last_checkpoint_) + ": declared steps must not decrease");
    }
  }
  // After the line's other reports (a step's value is stored before the checkpoint that follows it).
  const auto declare = [&] {
    if (!checkpoint) return;
    last_checkpoint_ = *checkpoint;
    StepValue declared;
    declared.step = *checkpoint;
    declared.checkpoint = true;
    steps->push_back(declared);
  };
  if (j.contains("value") && j.contains("values")) return Fail("give value or values, not both");
  std::vector<double> values;
  if (j.contains("values") && !ReadValues(j["values"], &values)) return;
  if (j.contains("attrs")) {
    if (!j["attrs"].is_object()) return Fail("attrs must be a JSON object");
    attrs_.update(j["attrs"]);
    if (attrs_.size() > kMaxAttrs) return Fail("more than " + std::to_string(kMaxAttrs) + " attrs");
  }
  if (j.contains("oom")) {
    const auto& kind = j["oom"];
    if (!kind.is_string() || (kind != "gpu" && kind != "host")) return Fail("oom must be \"gpu\" or \"host\"");
    oom_ = kind.get<std::string>();
    if (j.contains("message") && j["message"].is_string())
      oom_message_ = Utf8Prefix(j["message"].get<std::string>(), 200);
  }
  if (j.contains("step")) {
    const std::optional<std::int64_t> step = ReadStep(j, "step");
    if (!step) return;
    StepValue report;
    report.step = *step;
    if (j.contains("values")) {
      if (std::isnan(values.front())) {
        return Fail("an intermediate report needs the first metric, " + metrics_.front() + " (pruning uses it)");
      }
      report.value = values.front();
      if (metrics_.size() > 1) report.values = std::move(values);
    } else {
      if (!j.contains("value") || !IsFiniteNumber(j["value"])) {
        return Fail("an intermediate report needs a finite value");
      }
      report.value = j["value"].get<double>();
      if (metrics_.size() > 1) {
        report.values.assign(metrics_.size(), std::numeric_limits<double>::quiet_NaN());
        report.values.front() = report.value;
      }
    }
    last_step_ = report.step;
    last_value_ = report.value;
    steps->push_back(report);
    declare();
    return;
  }
  if (j.contains("value") || j.contains("values")) {
    if (final_value_) return Fail("a final value was already reported");
    if (j.contains("value")) {
      if (metrics_.size() > 1) {
        return Fail("this study's trials report several metrics (" + MetricList() +
                    "): give them all as {\"values\": {\"" + metrics_.front() + "\": ..., ...}}");
      }
      if (!IsFiniteNumber(j["value"])) return Fail("the final value must be a finite number");
      values = {j["value"].get<double>()};
    }
    std::string missing;
    for (size_t i = 0; i < metrics_.size(); ++i) {
      if (std::isnan(values[i])) missing += (missing.empty() ? "" : ", ") + metrics_[i];
    }
    if (!missing.empty()) {
      return Fail("the final values lack " + missing + " (this study's reported metrics: " + MetricList() + ")");
    }
    final_value_ = values.front();
    final_values_ = std::move(values);
  }
  declare();
}

}  // namespace cleansweep
