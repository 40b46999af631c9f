// Parses the JSON lines a trial writes to CLEANSWEEP_REPORT_FD (docs/trial-protocol.md).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "space/parameter.hpp"

namespace cleansweep {

// An intermediate report, or (checkpoint set) the declaration that the trial has written its
// checkpoint of `step` (docs/checkpoints.md), or (suggest set) a parameter the trial asks for
// (define-by-run: docs/trial-protocol.md); the worker answers it on the control pipe.
struct StepValue {
  std::int64_t step = 0;
  double value = 0;            // the first metric's
  std::vector<double> values;  // with several reported metrics: each one's, NaN where not reported
  bool checkpoint = false;
  std::optional<ParamSpec> suggest;
};

// Feed it bytes as they arrive; it keeps the final value, attributes and an out-of-memory notice,
// and hands intermediate reports out as they complete. The first protocol error is kept and
// everything after it ignored.
class ProtocolParser {
 public:
  // `metrics`: the names the trial reports, in study order (StudyOptions::ReportedMetrics()). With
  // one, `{"value": x}` reports it; with several, only `{"values": {...}}` with every name does.
  explicit ProtocolParser(std::vector<std::string> metrics = {"value"}) : metrics_(std::move(metrics)) {
    if (metrics_.empty()) metrics_ = {"value"};
  }

  static constexpr size_t kMaxLineBytes = 1 << 20;
  // The largest step (and checkpoint step) a trial may report: 2^53 - 1, the largest whole number
  // every JSON reader (JavaScript's in the report, a Python float, a pandas column) holds exactly.
  // A larger one fails the trial; the pruners' arithmetic is safe up to INT64_MAX all the same.
  static constexpr std::int64_t kMaxStep = (std::int64_t{1} << 53) - 1;
  static constexpr size_t kMaxAttrs = 1000;  // distinct top-level attr names; each becomes a column

  // Consumes `data`; appends completed intermediate reports to `steps`.
  void Feed(const char* data, size_t size, std::vector<StepValue>* steps);
  // End of stream: a last line without a newline is parsed too.
  void Finish(std::vector<StepValue>* steps);

  const std::optional<double>& final_value() const { return final_value_; }  // the first metric's
  const std::vector<double>& final_values() const { return final_values_; }  // every metric's, once reported
  const nlohmann::json& attrs() const { return attrs_; }
  const std::optional<std::string>& oom() const { return oom_; }  // "gpu" or "host"
  const std::string& oom_message() const { return oom_message_; }
  const std::optional<std::string>& error() const { return error_; }
  // The trial said it pruned itself ({"pruned": "why"}), and why ("" when it did not say).
  const std::optional<std::string>& pruned() const { return pruned_; }
  std::int64_t last_step() const { return last_step_; }
  const std::optional<double>& last_value() const { return last_value_; }  // of the last step report
  std::int64_t last_checkpoint() const { return last_checkpoint_; }        // -1: none declared

 private:
  void ParseLine(const std::string& line, std::vector<StepValue>* steps);
  void Fail(const std::string& message);
  // Reads a "values" object into `out` (one slot per metric, NaN where absent); false after Fail.
  bool ReadValues(const nlohmann::json& values, std::vector<double>* out);
  std::string MetricList() const;
  // Reads j[key] as a step, 0 to kMaxStep; nullopt after Fail.
  std::optional<std::int64_t> ReadStep(const nlohmann::json& j, const char* key);

  std::vector<std::string> metrics_;
  std::vector<double> final_values_;
  std::string pending_;
  int line_number_ = 0;
  std::optional<double> final_value_;
  nlohmann::json attrs_ = nlohmann::json::object();
  std::optional<std::string> oom_;
  std::string oom_message_;
  std::optional<std::string> error_;
  std::optional<std::string> pruned_;
  std::int64_t last_step_ = -1;
  std::optional<double> last_value_;
  std::int64_t last_checkpoint_ = -1;
  std::set<std::string> asked_;  // the names of the parameters the trial asked for
  size_t suggests_ = 0;          // its requests, repeats included
};

}  // namespace cleansweep
