// The column layout of the study file's tables (docs/study-format.md is the schema in prose).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "space/search_space.hpp"

namespace cleansweep {

enum class ColumnType { kInt32, kInt64, kFloat64, kString };

struct Column {
  std::string name;
  ColumnType type;
  size_t offset;
  size_t length = 0;  // kString: 0 for variable-length, else a fixed, NUL-padded width in bytes
};

// A packed row of native-typed fields. Strings are UTF-8: variable-length ones are a const char*
// in memory (their text lives in HDF5's global heap, which SWMR readers may see half-written), so
// the fields a reader must be able to trust at any moment are fixed-width, inside the row itself.
class RowLayout {
 public:
  void Add(const std::string& name, ColumnType type, size_t length = 0);
  const std::vector<Column>& columns() const { return columns_; }
  const Column* Find(const std::string& name) const;
  size_t size() const { return size_; }

 private:
  std::vector<Column> columns_;
  size_t size_ = 0;
};

// One row being filled; keeps the strings alive until written.
class RowBuffer {
 public:
  explicit RowBuffer(const RowLayout& layout);
  void Set(const std::string& column, std::int64_t value);
  void Set(const std::string& column, double value);
  void Set(const std::string& column, std::string value);
  const void* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  const Column& Get(const std::string& column, ColumnType type) const;

  const RowLayout& layout_;
  std::vector<unsigned char> bytes_;
  std::vector<std::unique_ptr<std::string>> strings_;
};

// How a parameter is stored: floats as float64; ints as int64, or float64 (NaN when inactive) if
// conditional; categorical and fixed by their values' type, text when any value is text or bool.
ColumnType ParamColumnType(const ParamSpec& spec);
// The fixed width of a text parameter's column: its longest value.
size_t ParamColumnLength(const ParamSpec& spec);
inline std::string ParamColumn(const std::string& name) { return "param_" + name; }

// Widths of the fixed-width text columns of /trials (docs/study-format.md).
inline constexpr size_t kStateLength = 11;  // "INTERRUPTED"
inline constexpr size_t kHostLength = 64;   // HOST_NAME_MAX
inline constexpr size_t kGpuLength = 64;    // a GPU or MIG UUID fits

// Columns of /trials that files of schema 3 gained later (all float64, NaN when unknown), in
// order: datetime_worker_free (issue 19), then what a trial cost and its constraint violation
// (issue 18). A file that lacks some
// is resumed without them; readers give NaN.
inline constexpr const char* kLaterTrialColumns[] = {"datetime_worker_free", "cpu_seconds", "gpu_seconds", "energy_j",
                                                     "violation"};

// Int64 columns of /trials added with checkpoints (issue 17): the last step whose checkpoint the
// trial declared, the step its latest attempt resumed from, and population-based training's
// lineage (the trial it started from, its generation); -1 for none (generation: 0), and in files
// without them.
inline constexpr const char* kLaterStepColumns[] = {"checkpoint_step", "resumed_from", "parent", "generation"};

// Gangs (issue 16; docs/multi-gpu.md): how many workers a trial held and which ("1-4,9"), and the
// largest of its processes' peaks (peak_rss_kb and gpu_mem_peak_mb are their sums). Files without
// them read as one worker, the trial's own worker, and its one process's peaks.
inline constexpr const char* kGangColumns[] = {"gpus", "workers", "peak_rss_max_kb", "gpu_mem_peak_max_mb"};
inline constexpr size_t kWorkersLength = 128;

// The width of /attempts' reason, a fixed-width text (no heap: nothing a reader can catch torn).
inline constexpr size_t kAttemptReasonLength = 256;

// A multi-metric study's column for one metric's value, in /trials and /intermediate.
inline std::string MetricColumn(const std::string& metric) { return "value_" + metric; }

// CRC-32 of a row's variable-length texts (reason, output_tail and attrs, each up to its first NUL
// as HDF5 stores it, then a NUL):
// HDF5 keeps them in its global heap without a checksum, so the row carries one (the column
// text_crc32, files since issue 18), and readers refuse a row whose texts do not match.
inline constexpr const char* kTextChecksumColumn = "text_crc32";
std::uint32_t TextChecksum(const std::string& reason, const std::string& output_tail, const std::string& attrs);

// The columns of /trials for `study`'s metrics (a multi-metric study gains value_<metric> and
// pareto after value) and `space`; `absent` names later columns an older file lacks.
RowLayout TrialsLayout(const SearchSpace& space, const StudyOptions& study, const std::set<std::string>& absent = {});

// The search space as the root attribute `space` stores it (docs/study-format.md): a JSON array,
// one object per parameter in column order, for readers that want typed columns without parsing
// the YAML config.
std::string SpaceJson(const SearchSpace& space);
// The columns of /intermediate: with several reported metrics, value_<metric> for each after value.
// The study's metrics as the root attribute `metrics` stores them: a JSON array of
// {"name": ..., "direction": "minimize"|"maximize"}, in order.
std::string MetricsJson(const StudyOptions& study);

RowLayout IntermediateLayout(const StudyOptions& study);

// Where and how a trial (or an attempt of one) ran: worker, host, gpu, exit_code, signal and
// peak_rss_kb, in that order, in /trials and /attempts alike.
void AddPlaceColumns(RowLayout* layout);
void SetPlaceColumns(const TrialRecord& record, RowBuffer* row);

// The columns of /attempts: one row per ended attempt of a trial that went on under its number
// from a checkpoint (docs/study-format.md).
RowLayout AttemptsLayout();
// /params: the parameters trials defined while they ran (define-by-run), one row per (trial, name).
RowLayout ParamsLayout();
inline constexpr size_t kTrialParamNameLength = 64;   // kMaxTrialDefinedNameBytes
inline constexpr size_t kTrialParamJsonLength = 512;  // kMaxDistributionBytes: a choice's JSON fits too

}  // namespace cleansweep
