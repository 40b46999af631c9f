#include "study/table_layout.hpp"

#include "util/crc32.hpp"
#include "util/status.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

namespace cleansweep {
namespace {

size_t SizeOf(ColumnType type) {
  switch (type) {
    case ColumnType::kInt32:
      return sizeof(std::int32_t);
    case ColumnType::kInt64:
      return sizeof(std::int64_t);
    case ColumnType::kFloat64:
      return sizeof(double);
    case ColumnType::kString:
      return sizeof(const char*);
  }
  return 0;
}

bool AllOf(const std::vector<ParamValue>& values, bool (*pred)(const ParamValue&)) {
  for (const ParamValue& v : values) {
    if (!pred(v)) return false;
  }
  return true;
}

bool IsInt(const ParamValue& v) { return std::holds_alternative<std::int64_t>(v); }
bool IsNumber(const ParamValue& v) { return IsInt(v) || std::holds_alternative<double>(v); }

}  // namespace

void AddPlaceColumns(RowLayout* layout) {
  layout->Add("worker", ColumnType::kInt32);
  layout->Add("host", ColumnType::kString, kHostLength);
  layout->Add("gpu", ColumnType::kString, kGpuLength);
  layout->Add("exit_code", ColumnType::kInt32);
  layout->Add("signal", ColumnType::kInt32);
  layout->Add("peak_rss_kb", ColumnType::kInt64);
}

void SetPlaceColumns(const TrialRecord& r, RowBuffer* row) {
  row->Set("worker", std::int64_t{r.worker});
  row->Set("host", r.host);
  row->Set("gpu", r.gpu);
  row->Set("exit_code", std::int64_t{r.exit_code});
  row->Set("signal", std::int64_t{r.signal});
  row->Set("peak_rss_kb", r.peak_rss_kb);
}

void RowLayout::Add(const std::string& name, ColumnType type, size_t length) {
  const bool fixed = type == ColumnType::kString && length > 0;
  const size_t align = fixed ? 1 : SizeOf(type);
  size_ = (size_ + align - 1) / align * align;
  columns_.push_back({name, type, size_, length});
  size_ += fixed ? length : SizeOf(type);
}

const Column* RowLayout::Find(const std::string& name) const {
  for (const Column& c : columns_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

RowBuffer::RowBuffer(const RowLayout& layout) : layout_(layout), bytes_((layout.size() + 7) / 8 * 8, 0) {
  for (const Column& c : layout.columns()) {
    if (c.type == ColumnType::kString && c.length == 0) Set(c.name, std::string());
  }
}

const Column& RowBuffer::Get(const std::string& column, ColumnType type) const {
  const Column* c = layout_.Find(column);
  // A misspelled column or a wrong type would write bytes over another column: never in release either.
  CS_CHECK(c != nullptr && (c->type == type || (type == ColumnType::kInt64 && c->type == ColumnType::kInt32)));
  (void)type;
  return *c;
}

void RowBuffer::Set(const std::string& column, std::int64_t value) {
  const Column& c = Get(column, ColumnType::kInt64);
  if (c.type == ColumnType::kInt32) {
    const auto narrow = static_cast<std::int32_t>(value);
    std::memcpy(bytes_.data() + c.offset, &narrow, sizeof narrow);
  } else {
    std::memcpy(bytes_.data() + c.offset, &value, sizeof value);
  }
}

void RowBuffer::Set(const std::string& column, double value) {
  std::memcpy(bytes_.data() + Get(column, ColumnType::kFloat64).offset, &value, sizeof value);
}

void RowBuffer::Set(const std::string& column, std::string value) {
  const Column& c = Get(column, ColumnType::kString);
  if (c.length > 0) {  // fixed width: cut to fit (at a UTF-8 character boundary), pad with NULs
    size_t n = std::min(value.size(), c.length);
    while (n > 0 && n < value.size() && (static_cast<unsigned char>(value[n]) & 0xC0) == 0x80) --n;
    std::memset(bytes_.data() + c.offset, 0, c.length);
    std::memcpy(bytes_.data() + c.offset, value.data(), n);
    return;
  }
  strings_.push_back(std::make_unique<std::string>(std::move(value)));
  const char* pointer = strings_.back()->c_str();
  std::memcpy(bytes_.data() + Get(column, ColumnType::kString).offset, &pointer, sizeof pointer);
}

ColumnType ParamColumnType(const ParamSpec& spec) {
  const bool conditional = SearchSpace::IsConditional(spec);
  std::vector<ParamValue> values;
  switch (spec.kind) {
    case ParamKind::kFloat:
      return ColumnType::kFloat64;
    case ParamKind::kInt:
      return conditional ? ColumnType::kFloat64 : ColumnType::kInt64;
    case ParamKind::kCategorical:
      values = spec.choices;
      break;
    case ParamKind::kFixed:
      values = {spec.fixed_value};
      break;
  }
  if (AllOf(values, IsInt)) return conditional ? ColumnType::kFloat64 : ColumnType::kInt64;
  if (AllOf(values, IsNumber)) return ColumnType::kFloat64;
  return ColumnType::kString;
}

size_t ParamColumnLength(const ParamSpec& spec) {
  size_t longest = 1;
  for (const ParamValue& v :
       spec.kind == ParamKind::kFixed ? std::vector<ParamValue>{spec.fixed_value} : spec.choices) {
    longest = std::max(longest, FormatValue(v).size());
  }
  return longest;
}

RowLayout TrialsLayout(const SearchSpace& space, const StudyOptions& study, const std::set<std::string>& absent) {
  RowLayout layout;
  layout.Add("number", ColumnType::kInt64);
  layout.Add("state", ColumnType::kString, kStateLength);
  layout.Add("value", ColumnType::kFloat64);
  if (study.multi_objective()) {
    for (const Metric& m : study.metrics) layout.Add(MetricColumn(m.name), ColumnType::kFloat64);
    layout.Add("pareto", ColumnType::kInt32);
  }
  for (const ParamSpec& spec : space.params()) {
    const ColumnType type = ParamColumnType(spec);
    layout.Add(ParamColumn(spec.name), type, type == ColumnType::kString ? ParamColumnLength(spec) : 0);
  }
  layout.Add("datetime_start", ColumnType::kFloat64);
  layout.Add("datetime_end", ColumnType::kFloat64);
  layout.Add("duration", ColumnType::kFloat64);
  AddPlaceColumns(&layout);
  layout.Add("attempt", ColumnType::kInt32);
  layout.Add("retry_of", ColumnType::kInt64);
  layout.Add("enqueued", ColumnType::kInt32);
  layout.Add("sampler_ms", ColumnType::kFloat64);
  layout.Add("last_step", ColumnType::kInt64);
  for (const char* gpu : {"gpu_mem_before_mb", "gpu_mem_peak_mb", "gpu_mem_after_mb", "gpu_mem_foreign_mb"}) {
    layout.Add(gpu, ColumnType::kFloat64);  // schema 3
  }
  for (const char* later : kLaterTrialColumns) {
    if (!absent.count(later)) layout.Add(later, ColumnType::kFloat64);
  }
  if (!absent.count(kTextChecksumColumn)) layout.Add(kTextChecksumColumn, ColumnType::kInt64);
  for (const char* later : kLaterStepColumns) {
    if (!absent.count(later)) layout.Add(later, ColumnType::kInt64);
  }
  if (!absent.count("gpus")) {
    layout.Add("gpus", ColumnType::kInt64);
    layout.Add("workers", ColumnType::kString, kWorkersLength);
    layout.Add("peak_rss_max_kb", ColumnType::kInt64);
    layout.Add("gpu_mem_peak_max_mb", ColumnType::kFloat64);
  }
  layout.Add("reason", ColumnType::kString);
  layout.Add("output_tail", ColumnType::kString);
  layout.Add("attrs", ColumnType::kString);
  return layout;
}

std::uint32_t TextChecksum(const std::string& reason, const std::string& output_tail, const std::string& attrs) {
  std::string all;
  // Each as HDF5 stores a variable-length string: up to its first NUL (a trial's output may hold one).
  for (const std::string* text : {&reason, &output_tail, &attrs}) {
    all += text->c_str();
    all += '\0';
  }
  return Crc32(all);
}

RowLayout IntermediateLayout(const StudyOptions& study) {
  RowLayout layout;
  layout.Add("trial", ColumnType::kInt64);
  layout.Add("step", ColumnType::kInt64);
  layout.Add("value", ColumnType::kFloat64);
  layout.Add("time", ColumnType::kFloat64);
  if (const std::vector<std::string> reported = study.ReportedMetrics(); reported.size() > 1) {
    for (const std::string& m : reported) layout.Add(MetricColumn(m), ColumnType::kFloat64);
  }
  return layout;
}

RowLayout AttemptsLayout() {
  RowLayout layout;
  layout.Add("trial", ColumnType::kInt64);
  layout.Add("attempt", ColumnType::kInt32);
  layout.Add("state", ColumnType::kString, kStateLength);
  layout.Add("resumed_from", ColumnType::kInt64);
  layout.Add("checkpoint_step", ColumnType::kInt64);
  layout.Add("last_step", ColumnType::kInt64);
  layout.Add("datetime_start", ColumnType::kFloat64);
  layout.Add("datetime_end", ColumnType::kFloat64);
  AddPlaceColumns(&layout);
  layout.Add("cpu_seconds", ColumnType::kFloat64);
  layout.Add("gpu_seconds", ColumnType::kFloat64);
  layout.Add("energy_j", ColumnType::kFloat64);
  layout.Add("reason", ColumnType::kString, kAttemptReasonLength);
  return layout;
}

RowLayout ParamsLayout() {
  RowLayout layout;
  layout.Add("trial", ColumnType::kInt64);
  layout.Add("name", ColumnType::kString, kTrialParamNameLength);
  layout.Add("value", ColumnType::kFloat64);
  layout.Add("value_json", ColumnType::kString, kTrialParamJsonLength);
  layout.Add("distribution", ColumnType::kString, kTrialParamJsonLength);
  return layout;
}

std::string MetricsJson(const StudyOptions& study) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const Metric& m : study.metrics)
    metrics.push_back({{"name", m.name}, {"direction", DirectionName(m.direction)}});
  return metrics.dump();
}

std::string SpaceJson(const SearchSpace& space) {
  nlohmann::json params = nlohmann::json::array();
  for (const ParamSpec& spec : space.params()) {
    nlohmann::json p = {{"name", spec.name}, {"kind", ParamKindName(spec.kind)}, {"column", ParamColumn(spec.name)}};
    if (spec.kind == ParamKind::kFloat || spec.kind == ParamKind::kInt) {
      p["low"] = spec.low;
      p["high"] = spec.high;
      p["log"] = spec.log;
      if (spec.step) p["step"] = *spec.step;
    }
    if (spec.kind == ParamKind::kCategorical) {
      p["choices"] = nlohmann::json::array();
      for (const ParamValue& v : spec.choices) p["choices"].push_back(ToJson(v));
    }
    if (spec.kind == ParamKind::kFixed) p["value"] = ToJson(spec.fixed_value);
    if (!spec.when.empty()) {
      p["when"] = nlohmann::json::object();
      for (const Condition& c : spec.when) {
        nlohmann::json values = nlohmann::json::array();
        for (const ParamValue& v : c.values) values.push_back(ToJson(v));
        p["when"][c.parent] = values;
      }
    }
    params.push_back(std::move(p));
  }
  return params.dump();
}

}  // namespace cleansweep
