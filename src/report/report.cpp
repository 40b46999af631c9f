#include "report/report.hpp"

#include "util/output_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "config/shard.hpp"
#include "report/importance.hpp"
#include "study/table_layout.hpp"

namespace cleansweep {

// The embedded page, style and script (generated from src/report/assets/ at build time).
extern const char kReport_html[];
extern const char kReport_css[];
extern const char kReport_js[];

namespace {

std::string Iso8601(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void ReplaceOnce(std::string* text, const std::string& placeholder, const std::string& value) {
  const size_t at = text->find(placeholder);
  if (at != std::string::npos) text->replace(at, placeholder.size(), value);
}

nlohmann::json TrialJson(const TrialRecord& r) {
  nlohmann::json t = {{"n", r.number},      {"s", TrialStateName(r.state)},
                      {"v", nullptr},       {"p", ToJson(r.params)},
                      {"t0", r.start_time}, {"t1", r.end_time},
                      {"w", r.worker},      {"h", r.host},
                      {"g", r.gpu},         {"r", r.reason},
                      {"a", r.attempt},     {"ro", r.retry_of},
                      {"ls", r.last_step}};
  if (r.value && std::isfinite(*r.value)) t["v"] = *r.value;
  if (!r.values.empty()) {  // a multi-metric study's COMPLETE trial: every metric, study order
    nlohmann::json& values = t["vs"] = nlohmann::json::array();
    for (const double v : r.values) values.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
  }
  if (r.pareto) t["pf"] = 1;
  if (std::isfinite(r.violation)) t["vi"] = r.violation;  // 0: meets study.constraints; > 0: infeasible
  if (std::isfinite(r.gpu_mem_peak_mb)) {                 // before, peak, after (MiB); null where unknown
    const auto known = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
    t["gm"] = {known(r.gpu_mem_before_mb), r.gpu_mem_peak_mb, known(r.gpu_mem_after_mb)};
  }
  if (const std::optional<double> gap = r.idle_gap_ms()) t["ig"] = *gap;  // its worker's idle gap before it
  if (r.gpus > 1) {  // a gang: every worker it held, its rank 0's first ("1-4,9")
    t["gp"] = r.gpus;
    t["ws"] = r.workers;
  }
  if (r.parent >= 0) {  // population-based training: the trial it started from, and its generation
    t["pa"] = r.parent;
    t["ge"] = r.generation;
  }
  return t;
}

// "cost <= 1", "0.5 <= accuracy": study.constraints as the page names them.
nlohmann::json ConstraintsJson(const StudyOptions& study) {
  nlohmann::json out = nlohmann::json::array();
  for (const Constraint& c : study.constraints) {
    const auto number = [](double v) { return nlohmann::json(v).dump(); };
    std::string text = c.name;
    if (c.min) text = number(*c.min) + " <= " + text;
    if (c.max) text += " <= " + number(*c.max);
    out.push_back(text);
  }
  return out;
}

}  // namespace

ReportInput ReportInputFrom(const StudyData& study) {
  ReportInput input;
  input.config = study.config;
  input.path = study.path;
  input.sampler = study.sampler;
  input.created = study.created;
  input.version = study.cleansweep_version;
  input.seed = study.seed;
  input.warm_start = study.warm_start;
  input.trials = study.trials;
  input.intermediate = study.intermediate;
  return input;
}

std::string DefaultReportPath(const std::string& study_path) {
  return std::filesystem::path(study_path).replace_extension(".html").string();
}

std::string RenderReport(const ReportInput& input) {
  const StudyConfig& c = input.config;
  const double now = input.now > 0 ? input.now : UnixNow();
  nlohmann::json data;
  data["study"] = {{"name", c.study.name},
                   {"direction", DirectionName(c.study.direction)},
                   {"metric", c.study.metric},
                   {"sampler", input.sampler.empty() ? c.sampler.kind : input.sampler},
                   {"seed", input.seed},
                   {"warm_start", input.warm_start},
                   {"pruner", c.pruner.kind},
                   {"created", input.created},
                   {"version", input.version},
                   {"path", input.path},
                   {"generated", Iso8601(now)},
                   {"generated_unix", now},
                   {"n_trials", ShardSize(c.study.shard, c.study.n_trials)},
                   {"refresh", input.refresh_seconds},
                   {"metrics", nlohmann::json::array()},
                   {"constraints", ConstraintsJson(c.study)}};
  for (const Metric& m : c.study.metrics) {
    data["study"]["metrics"].push_back({{"name", m.name}, {"direction", DirectionName(m.direction)}});
  }
  data["params"] = nlohmann::json::parse(SpaceJson(c.space));
  data["trials"] = nlohmann::json::array();
  std::vector<const TrialRecord*> rows;
  for (const TrialRecord& r : input.trials) rows.push_back(&r);
  std::sort(rows.begin(), rows.end(), [](const TrialRecord* a, const TrialRecord* b) { return a->number < b->number; });
  for (const TrialRecord* r : rows) data["trials"].push_back(TrialJson(*r));
  std::map<std::int64_t, std::map<std::int64_t, double>> steps;  // trial -> step -> value (last report wins)
  for (const IntermediateValue& v : input.intermediate) steps[v.trial][v.step] = v.value;
  data["steps"] = nlohmann::json::object();
  for (const auto& [trial, points] : steps) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [step, value] : points) {
      if (std::isfinite(value)) list.push_back({step, value});
    }
    data["steps"][std::to_string(trial)] = std::move(list);
  }
  ForestOptions forest;
  forest.seed = static_cast<std::uint64_t>(input.seed);
  const ImportanceResult importance = FanovaImportance(c, input.trials, forest);
  data["importance"] = {{"params", nlohmann::json::array()},
                        {"skipped", importance.skipped},
                        {"note", importance.note},
                        {"trials_used", importance.trials_used}};
  for (const ParamImportance& p : importance.params) {
    data["importance"]["params"].push_back({{"name", p.name}, {"importance", p.importance}});
  }
  // Invalid UTF-8 in a reason becomes U+FFFD. Every "<" is written \u003c (in JSON it occurs only
  // inside strings): a trial's text can then neither end the <script> ("</script>") nor open
  // "<!--<script>", after which an HTML parser reads past this element's end tag and takes the
  // page's code for data (JSON.parse fails, the page stays blank).
  const std::string dumped = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string json;
  json.reserve(dumped.size());
  for (const char ch : dumped) {
    if (ch == '<') {
      json += "\\u003c";
    } else {
      json += ch;
    }
  }

  std::string html = kReport_html;
  ReplaceOnce(&html, "@REFRESH@",
              input.refresh_seconds > 0
                  ? "<meta http-equiv=\"refresh\" content=\"" + std::to_string(input.refresh_seconds) + "\">\n"
                  : "");
  ReplaceOnce(&html, "@TITLE@", EscapeHtml("cleansweep: " + c.study.name));
  ReplaceOnce(&html, "@CSS@", kReport_css);
  ReplaceOnce(&html, "@JS@", kReport_js);
  ReplaceOnce(&html, "@DATA@", json);  // last: the data may contain the other placeholders
  return html;
}

Status WriteReportFile(const std::string& path, const std::string& html) {
  return WriteFileAtomically(path, html).WithContext("the report");
}

ReportingStore::ReportingStore(std::unique_ptr<StudyStore> inner, ReportInput base, std::string report_path,
                               Millis every, const Clock* clock)
    : inner_(std::move(inner)),
      input_(std::move(base)),
      path_(std::move(report_path)),
      every_(every),
      clock_(clock ? clock : SystemClock::Get()) {
  input_.refresh_seconds = static_cast<int>(std::max<long long>(1, every_.count() / 1000));
  for (size_t i = 0; i < input_.trials.size(); ++i) row_of_[input_.trials[i].number] = i;
}

ReportingStore::~ReportingStore() { MaybeWrite(/*final=*/true); }

Status ReportingStore::PutTrial(const TrialRecord& record) {
  CS_RETURN_IF_ERROR(inner_->PutTrial(record));
  pending_trials_.push_back(record);
  return deferred_ ? Status::Ok() : Flush();
}

Status ReportingStore::AppendIntermediate(const IntermediateValue& value) {
  CS_RETURN_IF_ERROR(inner_->AppendIntermediate(value));
  pending_values_.push_back(value);
  return deferred_ ? Status::Ok() : Flush();
}

Status ReportingStore::Flush() {
  CS_RETURN_IF_ERROR(inner_->Flush());
  // Only now are these rows in the file: the page never shows what a reader of the file cannot see.
  for (TrialRecord& record : pending_trials_) {
    if (const auto [it, fresh] = row_of_.emplace(record.number, input_.trials.size()); fresh) {
      input_.trials.push_back(std::move(record));
    } else {
      input_.trials[it->second] = std::move(record);
    }
  }
  input_.intermediate.insert(input_.intermediate.end(), pending_values_.begin(), pending_values_.end());
  pending_trials_.clear();
  pending_values_.clear();
  MaybeWrite(false);
  return Status::Ok();
}

void ReportingStore::MaybeWrite(bool final) {
  const double now = clock_->Now();
  if (!final && now - last_written_ < static_cast<double>(every_.count()) / 1e3) return;
  last_written_ = now;
  input_.now = now;
  if (final) input_.refresh_seconds = 0;  // the run is over: the page stops reloading
  const Status written = WriteReportFile(path_, RenderReport(input_));
  if (!written.ok() && !warned_) {
    std::fprintf(stderr, "cleansweep: warning: %s (the sweep goes on)\n", written.message().c_str());
    warned_ = true;
  }
}

}  // namespace cleansweep
