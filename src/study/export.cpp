#include "study/export.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/table_layout.hpp"
#include "util/json_limits.hpp"
#include "util/number_format.hpp"

namespace cleansweep {
namespace {

std::string CsvCell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string Number(double x) { return FormatDouble(x); }

std::string AttrCell(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json Attrs(const TrialRecord& r) {
  // The study file is input too: attrs that are not an object of bounded depth read as none.
  Result<nlohmann::json> attrs = ParseUntrustedJson(r.attrs_json);
  return attrs.ok() && attrs->is_object() ? *attrs : nlohmann::json::object();
}

}  // namespace

namespace {

// An optional measurement: empty in CSV and null in JSON when unknown (NaN).
std::string Known(double v) { return std::isnan(v) ? "" : Number(v); }
nlohmann::ordered_json KnownJson(double v) {
  return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
}

}  // namespace

CsvShape WriteCsv(const StudyData& study, std::ostream& out) {
  // How many trials hold each attribute; the columns are the kMaxAttrColumns held most widely.
  std::map<std::string, std::int64_t> holders;
  for (const TrialRecord& r : study.trials) {
    const nlohmann::json attrs = Attrs(r);  // named: items() of a temporary would outlive it
    for (const auto& item : attrs.items()) ++holders[item.key()];
  }
  CsvShape shape;
  shape.attr_names = holders.size();
  std::set<std::string> attr_names;
  if (holders.size() <= kMaxAttrColumns) {
    for (const auto& [name, n] : holders) attr_names.insert(name);
  } else {
    std::vector<std::pair<std::int64_t, std::string>> ranked;
    ranked.reserve(holders.size());
    for (const auto& [name, n] : holders) ranked.emplace_back(-n, name);  // most holders first, then by name
    std::partial_sort(ranked.begin(), ranked.begin() + kMaxAttrColumns, ranked.end());
    for (size_t i = 0; i < kMaxAttrColumns; ++i) attr_names.insert(ranked[i].second);
  }
  shape.attr_columns = attr_names.size();
  const bool others = attr_names.size() < holders.size();
  const StudyOptions& options = study.config.study;
  out << "number,state,value";
  if (options.multi_objective()) {
    for (const Metric& m : options.metrics) out << "," << CsvCell(MetricColumn(m.name));
    out << ",pareto";
  }
  for (const ParamSpec& spec : study.config.space.params()) out << "," << CsvCell("param_" + spec.name);
  for (const std::string& name : study.trial_defined_order) out << "," << CsvCell("param_" + name);  // /params
  for (const std::string& name : attr_names) out << "," << CsvCell("attr_" + name);
  if (others) out << ",attrs_other";
  out << ",datetime_start,datetime_end,duration,worker,host,gpu,exit_code,signal,peak_rss_kb,attempt,"
         "retry_of,enqueued,sampler_ms,last_step,gpu_mem_before_mb,gpu_mem_peak_mb,gpu_mem_after_mb,gpu_mem_foreign_mb,"
         "datetime_worker_free,cpu_seconds,gpu_seconds,energy_j,violation,checkpoint_step,resumed_from,parent,"
         "generation,gpus,workers,peak_rss_max_kb,gpu_mem_peak_max_mb,"
         "reason,"
         "output_tail\n";
  for (const TrialRecord& r : study.trials) {
    out << r.number << "," << TrialStateName(r.state) << "," << (r.value ? Number(*r.value) : "");
    if (options.multi_objective()) {
      for (size_t i = 0; i < options.metrics.size(); ++i) out << "," << (i < r.values.size() ? Known(r.values[i]) : "");
      out << "," << (r.pareto ? 1 : 0);
    }
    for (const ParamSpec& spec : study.config.space.params()) {
      const auto it = r.params.find(spec.name);
      out << "," << (it == r.params.end() ? "" : CsvCell(FormatValue(it->second)));
    }
    for (const std::string& name : study.trial_defined_order) {
      const auto it = r.params.find(name);
      out << "," << (it == r.params.end() ? "" : CsvCell(FormatValue(it->second)));
    }
    const nlohmann::json attrs = Attrs(r);
    for (const std::string& name : attr_names) {
      out << "," << (attrs.contains(name) ? CsvCell(AttrCell(attrs[name])) : "");
    }
    if (others) {  // the attributes without a column of their own, as one JSON object
      nlohmann::json rest = nlohmann::json::object();
      for (const auto& item : attrs.items()) {
        if (!attr_names.count(item.key())) rest[item.key()] = item.value();
      }
      out << "," << (rest.empty() ? "" : CsvCell(AttrCell(rest)));
    }
    out << "," << Number(r.start_time) << "," << Number(r.end_time) << "," << Number(r.duration()) << "," << r.worker
        << "," << CsvCell(r.host) << "," << CsvCell(r.gpu) << "," << r.exit_code << "," << r.signal << ","
        << r.peak_rss_kb << "," << r.attempt << "," << r.retry_of << "," << (r.enqueued ? 1 : 0) << ","
        << Number(r.sampler_ms) << "," << r.last_step << "," << Known(r.gpu_mem_before_mb) << ","
        << Known(r.gpu_mem_peak_mb) << "," << Known(r.gpu_mem_after_mb) << "," << Known(r.gpu_mem_foreign_mb) << ","
        << Known(r.worker_free_time) << "," << Known(r.cpu_seconds) << "," << Known(r.gpu_seconds) << ","
        << Known(r.energy_j) << "," << Known(r.violation) << "," << r.checkpoint_step << "," << r.resumed_from << ","
        << r.parent << "," << r.generation << "," << r.gpus << "," << CsvCell(r.workers) << "," << r.peak_rss_max_kb
        << "," << Known(r.gpu_mem_peak_max_mb) << "," << CsvCell(r.reason) << "," << CsvCell(r.output_tail) << "\n";
  }
  return shape;
}

void WriteJson(const StudyData& study, std::ostream& out) {
  using Json = nlohmann::ordered_json;  // keeps the fields in the order a reader expects
  Json doc;
  doc["study"] = {{"name", study.config.study.name},
                  {"direction", DirectionName(study.config.study.direction)},
                  {"metric", study.config.study.metric},
                  {"metrics", Json::array()},
                  {"sampler", study.sampler},
                  {"seed", study.seed},
                  {"cleansweep_version", study.cleansweep_version},
                  {"schema_version", study.schema_version},
                  {"created", study.created}};
  for (const Metric& m : study.config.study.metrics) {
    doc["study"]["metrics"].push_back({{"name", m.name}, {"direction", DirectionName(m.direction)}});
  }
  const bool several = study.config.study.multi_objective();
  Json trials = Json::array();
  for (const TrialRecord& r : study.trials) {
    Json values = Json::object();  // a multi-metric study's values by name, and its place on the front
    for (size_t i = 0; several && i < r.values.size(); ++i) {
      values[study.config.study.metrics[i].name] = KnownJson(r.values[i]);
    }
    trials.push_back({{"number", r.number},
                      {"state", TrialStateName(r.state)},
                      {"value", r.value ? Json(*r.value) : Json()},
                      {"params", Json::parse(ToJson(r.params).dump())},
                      {"attrs", Json::parse(Attrs(r).dump())},
                      {"datetime_start", r.start_time},
                      {"datetime_end", r.end_time},
                      {"duration", r.duration()},
                      {"worker", r.worker},
                      {"host", r.host},
                      {"gpu", r.gpu},
                      {"exit_code", r.exit_code},
                      {"signal", r.signal},
                      {"peak_rss_kb", r.peak_rss_kb},
                      {"attempt", r.attempt},
                      {"retry_of", r.retry_of},
                      {"enqueued", r.enqueued},
                      {"sampler_ms", r.sampler_ms},
                      {"last_step", r.last_step},
                      {"gpu_mem_before_mb", KnownJson(r.gpu_mem_before_mb)},
                      {"gpu_mem_peak_mb", KnownJson(r.gpu_mem_peak_mb)},
                      {"gpu_mem_after_mb", KnownJson(r.gpu_mem_after_mb)},
                      {"gpu_mem_foreign_mb", KnownJson(r.gpu_mem_foreign_mb)},
                      {"datetime_worker_free", KnownJson(r.worker_free_time)},
                      {"cpu_seconds", KnownJson(r.cpu_seconds)},
                      {"gpu_seconds", KnownJson(r.gpu_seconds)},
                      {"energy_j", KnownJson(r.energy_j)},
                      {"violation", KnownJson(r.violation)},
                      {"checkpoint_step", r.checkpoint_step},
                      {"resumed_from", r.resumed_from},
                      {"parent", r.parent},
                      {"generation", r.generation},
                      {"gpus", r.gpus},
                      {"workers", r.workers},
                      {"peak_rss_max_kb", r.peak_rss_max_kb},
                      {"gpu_mem_peak_max_mb", KnownJson(r.gpu_mem_peak_max_mb)},
                      {"reason", r.reason},
                      {"output_tail", r.output_tail}});
    if (several) {
      trials.back()["values"] = std::move(values);
      trials.back()["pareto"] = r.pareto;
    }
  }
  doc["trials"] = std::move(trials);
  Json intermediate = Json::array();
  for (const IntermediateValue& v : study.intermediate) {
    intermediate.push_back({{"trial", v.trial}, {"step", v.step}, {"value", v.value}, {"time", v.time}});
    if (const std::vector<std::string> reported = study.config.study.ReportedMetrics(); reported.size() > 1) {
      Json values = Json::object();
      for (size_t i = 0; i < v.values.size() && i < reported.size(); ++i) values[reported[i]] = KnownJson(v.values[i]);
      intermediate.back()["values"] = std::move(values);
    }
  }
  doc["intermediate"] = std::move(intermediate);
  Json attempts = Json::array();  // earlier attempts of trials that went on from a checkpoint
  for (const TrialRecord& a : study.attempts) {
    attempts.push_back({{"trial", a.number},
                        {"attempt", a.attempt},
                        {"state", TrialStateName(a.state)},
                        {"resumed_from", a.resumed_from},
                        {"checkpoint_step", a.checkpoint_step},
                        {"last_step", a.last_step},
                        {"datetime_start", a.start_time},
                        {"datetime_end", a.end_time},
                        {"worker", a.worker},
                        {"host", a.host},
                        {"gpu", a.gpu},
                        {"exit_code", a.exit_code},
                        {"signal", a.signal},
                        {"peak_rss_kb", a.peak_rss_kb},
                        {"cpu_seconds", KnownJson(a.cpu_seconds)},
                        {"gpu_seconds", KnownJson(a.gpu_seconds)},
                        {"energy_j", KnownJson(a.energy_j)},
                        {"reason", a.reason}});
  }
  doc["attempts"] = std::move(attempts);
  // Trials' output and reasons are bytes, not always UTF-8: invalid bytes become U+FFFD.
  out << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace cleansweep
