// ReadStudyFile: reads a study back column by column, so files written by older or newer versions
// with extra columns still load.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "study/hdf5_handle.hpp"
#include "study/study_file.hpp"
#include "study/study_reader.hpp"
#include "study/table_layout.hpp"
#include "util/crc32.hpp"
#include "util/utf8.hpp"

namespace cleansweep {
namespace {

// A column read after the first one must hold at least the first one's `rows`.
Status CoversRows(size_t size, size_t rows, const char* table) {
  if (size >= rows) return Status::Ok();
  return Status::IoError(std::string(table) + " has a column of " + std::to_string(size) + " rows, another of " +
                         std::to_string(rows));
}

// Reads one field of a 1-D compound dataset into `out` (HDF5 matches members by name).
template <typename T>
Status ReadColumn(hid_t dataset, const char* field, hid_t member_type, std::vector<T>* out) {
  CS_ASSIGN_OR_RETURN(const hsize_t rows, h5::RowCount(dataset, std::string("column ") + field));
  out->assign(rows, T{});
  if (rows == 0) return Status::Ok();
  h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(T)));
  h5::Must(H5Tinsert(type.get(), field, 0, member_type));
  return h5::CheckCall(H5Dread(dataset, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data()),
                       std::string("cannot read column ") + field);
}

// The file's type of one member of a compound dataset; invalid when there is no such member.
h5::Handle MemberType(hid_t dataset, const char* field) {
  h5::Handle type(H5Dget_type(dataset));
  const int index = H5Tget_member_index(type.get(), field);
  return h5::Handle(index < 0 ? H5I_INVALID_HID : H5Tget_member_type(type.get(), static_cast<unsigned>(index)));
}

bool HasMember(hid_t dataset, const char* field) { return MemberType(dataset, field).valid(); }

// A text column, stored variable-length or fixed-width (NUL-padded).
Result<std::vector<std::string>> ReadStrings(hid_t dataset, const char* field) {
  h5::Handle stored = MemberType(dataset, field);
  if (stored.valid() && H5Tget_class(stored.get()) == H5T_STRING && H5Tis_variable_str(stored.get()) <= 0) {
    const size_t width = H5Tget_size(stored.get());
    CS_ASSIGN_OR_RETURN(const hsize_t rows, h5::RowCount(dataset, std::string("column ") + field));
    std::vector<char> raw(rows * width);
    std::vector<std::string> values;
    if (rows == 0) return values;
    h5::Handle fixed = h5::FixedString(width);
    h5::Handle type(H5Tcreate(H5T_COMPOUND, width));
    h5::Must(H5Tinsert(type.get(), field, 0, fixed.get()));
    CS_RETURN_IF_ERROR(h5::CheckCall(H5Dread(dataset, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()),
                                     std::string("cannot read column ") + field));
    for (hsize_t i = 0; i < rows; ++i) {
      const char* cell = raw.data() + i * width;
      values.emplace_back(cell, strnlen(cell, width));
    }
    return values;
  }
  std::vector<char*> raw;
  h5::Handle text = h5::VarString();
  CS_RETURN_IF_ERROR(ReadColumn(dataset, field, text.get(), &raw));
  std::vector<std::string> values;
  values.reserve(raw.size());
  for (char* s : raw) {
    values.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return values;
}

template <typename T>
Result<std::vector<T>> ReadNumbers(hid_t dataset, const char* field, hid_t native) {
  std::vector<T> values;
  CS_RETURN_IF_ERROR(ReadColumn(dataset, field, native, &values));
  return values;
}

// The texts of /trials (reason, output tail, attrs), and the rows whose texts could not be read
// whole: cells of a row the writer was rewriting while we read (see ReadTexts).
struct RowTexts {
  std::vector<std::string> reasons, tails, attrs;
  std::vector<size_t> unsettled;  // row indices, ascending; their texts are empty here
};

// The texts and their CRC-32 as one H5Dread reads them: every cell of a row from one read of its
// chunk.
struct TextCells {
  char* text[3] = {nullptr, nullptr, nullptr};
  std::int64_t crc = 0;
};
constexpr const char* kTextColumns[3] = {"reason", "output_tail", "attrs"};

h5::Handle TextCellsType() {
  h5::Handle text = h5::VarString();
  h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(TextCells)));
  for (size_t i = 0; i < 3; ++i) {
    h5::Must(H5Tinsert(type.get(), kTextColumns[i], offsetof(TextCells, text) + i * sizeof(char*), text.get()));
  }
  h5::Must(H5Tinsert(type.get(), kTextChecksumColumn, offsetof(TextCells, crc), H5T_NATIVE_INT64));
  return type;
}

// Rows [first, first + count) into `cells`; false when HDF5 could not follow a row's heap address.
bool ReadTextCells(hid_t dataset, hid_t type, hsize_t first, hsize_t count, TextCells* cells) {
  h5::Handle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {first};
  const hsize_t size[1] = {count};
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr) < 0) return false;
  h5::Handle mem_space(H5Screate_simple(1, size, nullptr));
  return H5Dread(dataset, type, mem_space.get(), file_space.get(), H5P_DEFAULT, cells) >= 0;
}

// Takes the texts out of `cells` that a read filled (`read`; HDF5's copies are freed): true when
// they match the row's CRC-32. Otherwise the texts are left empty, for a later read.
bool TakeTexts(bool read, TextCells* cells, std::string* reason, std::string* tail, std::string* attrs) {
  std::string* out[3] = {reason, tail, attrs};
  for (size_t i = 0; i < 3; ++i) {
    *out[i] = read && cells->text[i] ? cells->text[i] : "";
    if (read) H5free_memory(cells->text[i]);  // what a failed read left there is not ours to free
    cells->text[i] = nullptr;
  }
  if (read && static_cast<std::uint32_t>(cells->crc) == TextChecksum(*reason, *tail, *attrs)) return true;
  for (std::string* text : out) text->clear();
  return false;
}

constexpr hsize_t kTextBlockRows = 256;

// Rows [first, first + count) into `cells` (count <= kTextBlockRows) with one read; a block HDF5
// cannot read (a heap address past the end it knows of) is read row by row. `read[i]`: row
// first + i was read (its texts are then to be taken out by TakeTexts).
void ReadTextBlock(hid_t dataset, hid_t type, hsize_t first, hsize_t count, TextCells* cells, bool* read) {
  std::fill(cells, cells + count, TextCells{});
  const bool block = ReadTextCells(dataset, type, first, count, cells);
  for (hsize_t i = 0; i < count; ++i) {
    read[i] = block;
    if (!block) {
      cells[i] = TextCells{};
      read[i] = ReadTextCells(dataset, type, first + i, 1, &cells[i]);
    }
  }
}

// A live writer rewrites rows many times a second (RUNNING, then the end), and HDF5 keeps variable-
// length texts in its global heap, outside the row: a reader can see a row's new cells with its
// old heap (or an address past the end it knows of), and the row's checksum then disagrees with
// its texts. Retrying the whole file does not converge on a busy study: some row is always in
// flux (measured: about every second read of a 1,500-trial toy sweep, and one read in 200 still
// failing after seven whole tries). So a row that cannot be read whole is set aside as unsettled
// and read again on its own (ReadUnsettledTexts), while the rest of the read stands.
Result<RowTexts> ReadTexts(hid_t dataset) {
  RowTexts texts;
  bool all_variable = HasMember(dataset, kTextChecksumColumn);
  for (const char* name : kTextColumns) {
    h5::Handle stored = MemberType(dataset, name);
    all_variable = all_variable && stored.valid() && H5Tget_class(stored.get()) == H5T_STRING &&
                   H5Tis_variable_str(stored.get()) > 0;
  }
  if (!all_variable) {  // files from before the checksum, or with fixed-width texts: nothing in a heap
    for (auto [name, out] : {std::pair{kTextColumns[0], &texts.reasons}, std::pair{kTextColumns[1], &texts.tails},
                             std::pair{kTextColumns[2], &texts.attrs}}) {
      CS_ASSIGN_OR_RETURN(*out, ReadStrings(dataset, name));
    }
    if (HasMember(dataset, kTextChecksumColumn)) {
      CS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> crcs,
                          ReadNumbers<std::int64_t>(dataset, kTextChecksumColumn, H5T_NATIVE_INT64));
      const size_t rows = std::min({crcs.size(), texts.reasons.size(), texts.tails.size(), texts.attrs.size()});
      for (size_t row = 0; row < rows; ++row) {
        if (static_cast<std::uint32_t>(crcs[row]) !=
            TextChecksum(texts.reasons[row], texts.tails[row], texts.attrs[row]))
          texts.unsettled.push_back(row);
      }
    }
    return texts;
  }
  CS_ASSIGN_OR_RETURN(const hsize_t rows, h5::RowCount(dataset, "the texts of /trials"));
  texts.reasons.resize(rows);
  texts.tails.resize(rows);
  texts.attrs.resize(rows);
  const h5::Handle type = TextCellsType();
  std::vector<TextCells> cells(kTextBlockRows);
  bool read[kTextBlockRows];
  for (hsize_t first = 0; first < rows; first += kTextBlockRows) {
    const hsize_t count = std::min(kTextBlockRows, rows - first);
    ReadTextBlock(dataset, type.get(), first, count, cells.data(), read);
    for (hsize_t i = 0; i < count; ++i) {
      const hsize_t row = first + i;
      if (!TakeTexts(read[i], &cells[i], &texts.reasons[row], &texts.tails[row], &texts.attrs[row])) {
        texts.unsettled.push_back(row);
      }
    }
  }
  return texts;
}

// Turns a stored parameter cell back into the value the sampler produced; nullopt when inactive.
std::optional<ParamValue> ParamFromCell(const ParamSpec& spec, double number, const std::string& text,
                                        ColumnType type) {
  if (type == ColumnType::kString) {
    if (text.empty()) return std::nullopt;
    const std::vector<ParamValue> values =
        spec.kind == ParamKind::kFixed ? std::vector<ParamValue>{spec.fixed_value} : spec.choices;
    for (const ParamValue& v : values) {
      if (FormatValue(v) == text) return v;
    }
    return ParamValue(text);
  }
  if (std::isnan(number)) return std::nullopt;
  const bool is_int = spec.kind == ParamKind::kInt ||
                      (spec.kind == ParamKind::kCategorical && std::holds_alternative<std::int64_t>(spec.choices[0])) ||
                      (spec.kind == ParamKind::kFixed && std::holds_alternative<std::int64_t>(spec.fixed_value));
  if (is_int) return ParamValue(static_cast<std::int64_t>(std::llround(number)));
  return ParamValue(number);
}

// `unsettled` gets the rows whose texts were caught in the middle of a write (see ReadTexts).
Status ReadTrials(hid_t file, StudyData* study, std::vector<size_t>* unsettled) {
  Result<h5::Handle> ds = h5::CheckId(H5Dopen2(file, "trials", H5P_DEFAULT), "missing dataset /trials");
  if (!ds.ok()) return ds.status();
  const hid_t d = ds->get();
  auto numbers = ReadNumbers<std::int64_t>(d, "number", H5T_NATIVE_INT64);
  auto states = ReadStrings(d, "state");
  auto values = ReadNumbers<double>(d, "value", H5T_NATIVE_DOUBLE);
  auto starts = ReadNumbers<double>(d, "datetime_start", H5T_NATIVE_DOUBLE);
  auto ends = ReadNumbers<double>(d, "datetime_end", H5T_NATIVE_DOUBLE);
  auto workers = ReadNumbers<std::int32_t>(d, "worker", H5T_NATIVE_INT32);
  auto hosts = ReadStrings(d, "host");
  auto gpus = ReadStrings(d, "gpu");
  auto exits = ReadNumbers<std::int32_t>(d, "exit_code", H5T_NATIVE_INT32);
  auto signals = ReadNumbers<std::int32_t>(d, "signal", H5T_NATIVE_INT32);
  auto rss = ReadNumbers<std::int64_t>(d, "peak_rss_kb", H5T_NATIVE_INT64);
  auto attempts = ReadNumbers<std::int32_t>(d, "attempt", H5T_NATIVE_INT32);
  // Schema 1 had no retry_of column: every trial there is a fresh one.
  auto retry_of = HasMember(d, "retry_of") ? ReadNumbers<std::int64_t>(d, "retry_of", H5T_NATIVE_INT64)
                                           : Result<std::vector<std::int64_t>>(std::vector<std::int64_t>());
  auto enqueued = ReadNumbers<std::int32_t>(d, "enqueued", H5T_NATIVE_INT32);
  auto sampler_ms = ReadNumbers<double>(d, "sampler_ms", H5T_NATIVE_DOUBLE);
  auto steps = ReadNumbers<std::int64_t>(d, "last_step", H5T_NATIVE_INT64);
  auto texts = ReadTexts(d);
  // Float columns files gained over time: GPU memory (schema 3), the idle gap (issue 19), the cost
  // (issue 18). A file without one reads it as unknown (NaN).
  static const std::pair<const char*, double TrialRecord::*> kOptional[] = {
      {"gpu_mem_before_mb", &TrialRecord::gpu_mem_before_mb},
      {"gpu_mem_peak_mb", &TrialRecord::gpu_mem_peak_mb},
      {"gpu_mem_after_mb", &TrialRecord::gpu_mem_after_mb},
      {"gpu_mem_foreign_mb", &TrialRecord::gpu_mem_foreign_mb},
      {"datetime_worker_free", &TrialRecord::worker_free_time},
      {"cpu_seconds", &TrialRecord::cpu_seconds},
      {"gpu_seconds", &TrialRecord::gpu_seconds},
      {"energy_j", &TrialRecord::energy_j},
      {"violation", &TrialRecord::violation}};
  std::vector<std::vector<double>> optional;
  for (const auto& [field, member] : kOptional) {
    auto column = HasMember(d, field) ? ReadNumbers<double>(d, field, H5T_NATIVE_DOUBLE)
                                      : Result<std::vector<double>>(std::vector<double>());
    CS_RETURN_IF_ERROR(column.status());
    optional.push_back(std::move(*column));
  }
  for (const Status& s :
       {numbers.status(), states.status(), values.status(), starts.status(), ends.status(), workers.status(),
        hosts.status(), gpus.status(), exits.status(), signals.status(), rss.status(), attempts.status(),
        retry_of.status(), enqueued.status(), sampler_ms.status(), steps.status(), texts.status()}) {
    CS_RETURN_IF_ERROR(s);
  }
  const size_t n = numbers->size();
  // The columns are read one by one while a writer may append rows: a later column may be longer
  // (its extra rows are newer and are left for the next read), never shorter.
  for (const size_t size :
       {states->size(), values->size(), starts->size(), ends->size(), workers->size(), hosts->size(), gpus->size(),
        exits->size(), signals->size(), rss->size(), attempts->size(), enqueued->size(), sampler_ms->size(),
        steps->size(), texts->reasons.size(), texts->tails.size(), texts->attrs.size()}) {
    CS_RETURN_IF_ERROR(CoversRows(size, n, "/trials"));
  }
  for (const std::vector<double>& column : optional) {
    if (!column.empty()) CS_RETURN_IF_ERROR(CoversRows(column.size(), n, "/trials"));
  }
  if (!retry_of->empty()) CS_RETURN_IF_ERROR(CoversRows(retry_of->size(), n, "/trials"));
  study->trials.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TrialRecord& r = study->trials[i];
    r.number = (*numbers)[i];
    if (!ParseTrialState((*states)[i], &r.state)) {
      return Status::IoError("trial " + std::to_string(r.number) + " has unknown state '" + (*states)[i] + "'");
    }
    if (!std::isnan((*values)[i])) r.value = (*values)[i];
    r.start_time = (*starts)[i];
    r.end_time = (*ends)[i];
    r.worker = (*workers)[i];
    r.host = (*hosts)[i];
    r.gpu = (*gpus)[i];
    r.exit_code = (*exits)[i];
    r.signal = (*signals)[i];
    r.peak_rss_kb = (*rss)[i];
    r.attempt = (*attempts)[i];
    r.retry_of = retry_of->empty() ? -1 : (*retry_of)[i];
    r.enqueued = (*enqueued)[i] != 0;
    r.sampler_ms = (*sampler_ms)[i];
    r.last_step = (*steps)[i];
    r.reason = texts->reasons[i];
    r.output_tail = texts->tails[i];
    r.attrs_json = texts->attrs[i];
    for (size_t c = 0; c < optional.size(); ++c) {
      if (!optional[c].empty()) r.*kOptional[c].second = optional[c][i];
    }
  }
  unsettled->clear();
  for (size_t row : texts->unsettled) {
    if (row < n) unsettled->push_back(row);  // rows past n are newer than this read's table
  }
  for (const auto& [field, member] :
       {std::pair{"checkpoint_step", &TrialRecord::checkpoint_step},
        std::pair{"resumed_from", &TrialRecord::resumed_from}, std::pair{"parent", &TrialRecord::parent},
        std::pair{"generation", &TrialRecord::generation}}) {
    if (!HasMember(d, field)) continue;  // files from before checkpoints, or lineage: the defaults
    auto column = ReadNumbers<std::int64_t>(d, field, H5T_NATIVE_INT64);
    CS_RETURN_IF_ERROR(column.status());
    CS_RETURN_IF_ERROR(CoversRows(column->size(), n, "/trials"));
    for (size_t i = 0; i < n; ++i) study->trials[i].*member = (*column)[i];
  }
  if (HasMember(d, "gpus")) {  // files since gangs (issue 16); before, every trial held one worker
    auto held = ReadNumbers<std::int64_t>(d, "gpus", H5T_NATIVE_INT64);
    auto ranks = ReadStrings(d, "workers");
    auto rss_max = ReadNumbers<std::int64_t>(d, "peak_rss_max_kb", H5T_NATIVE_INT64);
    auto gpu_max = ReadNumbers<double>(d, "gpu_mem_peak_max_mb", H5T_NATIVE_DOUBLE);
    for (const Status& s : {held.status(), ranks.status(), rss_max.status(), gpu_max.status()}) CS_RETURN_IF_ERROR(s);
    for (const size_t size : {held->size(), ranks->size(), rss_max->size(), gpu_max->size()}) {
      CS_RETURN_IF_ERROR(CoversRows(size, n, "/trials"));
    }
    for (size_t i = 0; i < n; ++i) {
      TrialRecord& r = study->trials[i];
      r.gpus = static_cast<int>((*held)[i]);
      r.workers = (*ranks)[i];
      r.peak_rss_max_kb = (*rss_max)[i];
      r.gpu_mem_peak_max_mb = (*gpu_max)[i];
    }
  } else {
    for (TrialRecord& r : study->trials) {
      r.peak_rss_max_kb = r.peak_rss_kb;
      r.gpu_mem_peak_max_mb = r.gpu_mem_peak_mb;
    }
  }
  if (study->config.study.multi_objective()) {  // value_<metric> and pareto (docs/study-format.md)
    const std::vector<Metric>& metrics = study->config.study.metrics;
    std::vector<std::vector<double>> columns;
    for (const Metric& m : metrics) {
      auto column = ReadNumbers<double>(d, MetricColumn(m.name).c_str(), H5T_NATIVE_DOUBLE);
      CS_RETURN_IF_ERROR(column.status());
      CS_RETURN_IF_ERROR(CoversRows(column->size(), n, "/trials"));
      columns.push_back(std::move(*column));
    }
    auto pareto = ReadNumbers<std::int32_t>(d, "pareto", H5T_NATIVE_INT32);
    CS_RETURN_IF_ERROR(pareto.status());
    CS_RETURN_IF_ERROR(CoversRows(pareto->size(), n, "/trials"));
    for (size_t i = 0; i < n; ++i) {
      TrialRecord& r = study->trials[i];
      r.pareto = (*pareto)[i] != 0;
      if (r.state != TrialState::kComplete) continue;
      for (const std::vector<double>& column : columns) r.values.push_back(column[i]);
    }
  }
  for (const ParamSpec& spec : study->config.space.params()) {
    const std::string column = ParamColumn(spec.name);
    const ColumnType type = ParamColumnType(spec);
    std::vector<double> numbers_col(n, std::nan(""));
    std::vector<std::string> text_col(n);
    if (type == ColumnType::kString) {
      auto col = ReadStrings(d, column.c_str());
      if (!col.ok()) return col.status();
      CS_RETURN_IF_ERROR(CoversRows(col->size(), n, "/trials"));
      text_col = std::move(*col);
    } else if (type == ColumnType::kInt64) {
      auto col = ReadNumbers<std::int64_t>(d, column.c_str(), H5T_NATIVE_INT64);
      if (!col.ok()) return col.status();
      CS_RETURN_IF_ERROR(CoversRows(col->size(), n, "/trials"));
      for (size_t i = 0; i < n; ++i) numbers_col[i] = static_cast<double>((*col)[i]);
    } else {
      auto col = ReadNumbers<double>(d, column.c_str(), H5T_NATIVE_DOUBLE);
      if (!col.ok()) return col.status();
      CS_RETURN_IF_ERROR(CoversRows(col->size(), n, "/trials"));
      numbers_col = std::move(*col);
    }
    for (size_t i = 0; i < n; ++i) {
      std::optional<ParamValue> v = ParamFromCell(spec, numbers_col[i], text_col[i], type);
      if (v) study->trials[i].params[spec.name] = *v;
    }
  }
  return Status::Ok();
}

Status ReadIntermediate(hid_t file, StudyData* study) {
  Result<h5::Handle> ds = h5::CheckId(H5Dopen2(file, "intermediate", H5P_DEFAULT), "missing dataset /intermediate");
  if (!ds.ok()) return ds.status();
  auto trials = ReadNumbers<std::int64_t>(ds->get(), "trial", H5T_NATIVE_INT64);
  auto steps = ReadNumbers<std::int64_t>(ds->get(), "step", H5T_NATIVE_INT64);
  auto values = ReadNumbers<double>(ds->get(), "value", H5T_NATIVE_DOUBLE);
  auto times = ReadNumbers<double>(ds->get(), "time", H5T_NATIVE_DOUBLE);
  for (const Status& s : {trials.status(), steps.status(), values.status(), times.status()}) CS_RETURN_IF_ERROR(s);
  for (const size_t size : {steps->size(), values->size(), times->size()}) {
    CS_RETURN_IF_ERROR(CoversRows(size, trials->size(), "/intermediate"));
  }
  std::vector<std::vector<double>> columns;  // value_<metric>, with several reported metrics
  if (const std::vector<std::string> reported = study->config.study.ReportedMetrics(); reported.size() > 1) {
    for (const std::string& m : reported) {
      auto column = ReadNumbers<double>(ds->get(), MetricColumn(m).c_str(), H5T_NATIVE_DOUBLE);
      CS_RETURN_IF_ERROR(column.status());
      CS_RETURN_IF_ERROR(CoversRows(column->size(), trials->size(), "/intermediate"));
      columns.push_back(std::move(*column));
    }
  }
  for (size_t i = 0; i < trials->size(); ++i) {
    study->intermediate.push_back({(*trials)[i], (*steps)[i], (*values)[i], (*times)[i], {}});
    for (const std::vector<double>& column : columns) study->intermediate.back().values.push_back(column[i]);
  }
  return Status::Ok();
}

// /params (define-by-run): each row's value joins its trial's params, its distribution the
// trial's distributions; StudyData::trial_defined gets every name, in first-asked order.
Status ReadTrialParams(hid_t file, StudyData* study) {
  if (H5Lexists(file, "params", H5P_DEFAULT) <= 0) return Status::Ok();  // files from before define-by-run
  Result<h5::Handle> ds = h5::CheckId(H5Dopen2(file, "params", H5P_DEFAULT), "cannot open /params");
  if (!ds.ok()) return ds.status();
  const hid_t d = ds->get();
  auto trials = ReadNumbers<std::int64_t>(d, "trial", H5T_NATIVE_INT64);
  auto names = ReadStrings(d, "name");
  auto values = ReadStrings(d, "value_json");
  auto distributions = ReadStrings(d, "distribution");
  for (const Status& s : {trials.status(), names.status(), values.status(), distributions.status()}) {
    CS_RETURN_IF_ERROR(s);
  }
  for (const size_t size : {names->size(), values->size(), distributions->size()}) {
    CS_RETURN_IF_ERROR(CoversRows(size, trials->size(), "/params"));
  }
  std::map<std::int64_t, size_t> index_of;
  for (size_t i = 0; i < study->trials.size(); ++i) index_of[study->trials[i].number] = i;
  for (size_t i = 0; i < trials->size(); ++i) {
    const auto at = index_of.find((*trials)[i]);
    const std::string& name = (*names)[i];
    if (at == index_of.end() || name.empty()) continue;  // no trial row: nothing to join it to
    const nlohmann::json value = nlohmann::json::parse((*values)[i], nullptr, /*allow_exceptions=*/false);
    Result<ParamSet> parsed = ParamSetFromJson(nlohmann::json{{name, value}});
    if (value.is_discarded() || !parsed.ok()) {
      return Status::IoError("/params row " + std::to_string(i) + ": the value of " + name +
                             " is not JSON: " + Utf8Prefix((*values)[i], 60));
    }
    TrialRecord& r = study->trials[at->second];
    r.params[name] = parsed->begin()->second;
    r.distributions[name] = (*distributions)[i];
    if (!study->trial_defined.count(name)) study->trial_defined_order.push_back(name);
    study->trial_defined[name] = (*distributions)[i];
  }
  return Status::Ok();
}

Status ReadAttempts(hid_t file, StudyData* study) {
  if (H5Lexists(file, "attempts", H5P_DEFAULT) <= 0) return Status::Ok();  // files from before checkpoints
  Result<h5::Handle> ds = h5::CheckId(H5Dopen2(file, "attempts", H5P_DEFAULT), "cannot open /attempts");
  if (!ds.ok()) return ds.status();
  const hid_t d = ds->get();
  auto trials = ReadNumbers<std::int64_t>(d, "trial", H5T_NATIVE_INT64);
  auto attempts = ReadNumbers<std::int32_t>(d, "attempt", H5T_NATIVE_INT32);
  auto states = ReadStrings(d, "state");
  auto resumed = ReadNumbers<std::int64_t>(d, "resumed_from", H5T_NATIVE_INT64);
  auto checkpoints = ReadNumbers<std::int64_t>(d, "checkpoint_step", H5T_NATIVE_INT64);
  auto steps = ReadNumbers<std::int64_t>(d, "last_step", H5T_NATIVE_INT64);
  auto starts = ReadNumbers<double>(d, "datetime_start", H5T_NATIVE_DOUBLE);
  auto ends = ReadNumbers<double>(d, "datetime_end", H5T_NATIVE_DOUBLE);
  auto workers = ReadNumbers<std::int32_t>(d, "worker", H5T_NATIVE_INT32);
  auto hosts = ReadStrings(d, "host");
  auto gpus = ReadStrings(d, "gpu");
  auto exits = ReadNumbers<std::int32_t>(d, "exit_code", H5T_NATIVE_INT32);
  auto signals = ReadNumbers<std::int32_t>(d, "signal", H5T_NATIVE_INT32);
  auto rss = ReadNumbers<std::int64_t>(d, "peak_rss_kb", H5T_NATIVE_INT64);
  auto cpu = ReadNumbers<double>(d, "cpu_seconds", H5T_NATIVE_DOUBLE);
  auto gpu_s = ReadNumbers<double>(d, "gpu_seconds", H5T_NATIVE_DOUBLE);
  auto energy = ReadNumbers<double>(d, "energy_j", H5T_NATIVE_DOUBLE);
  auto reasons = ReadStrings(d, "reason");
  for (const Status& s :
       {trials.status(), attempts.status(), states.status(), resumed.status(), checkpoints.status(), steps.status(),
        starts.status(), ends.status(), workers.status(), hosts.status(), gpus.status(), exits.status(),
        signals.status(), rss.status(), cpu.status(), gpu_s.status(), energy.status(), reasons.status()}) {
    CS_RETURN_IF_ERROR(s);
  }
  const size_t n = trials->size();
  for (const size_t size :
       {attempts->size(), states->size(), resumed->size(), checkpoints->size(), steps->size(), starts->size(),
        ends->size(), workers->size(), hosts->size(), gpus->size(), exits->size(), signals->size(), rss->size(),
        cpu->size(), gpu_s->size(), energy->size(), reasons->size()}) {
    CS_RETURN_IF_ERROR(CoversRows(size, n, "/attempts"));
  }
  for (size_t i = 0; i < n; ++i) {
    TrialRecord r;
    r.number = (*trials)[i];
    r.attempt = (*attempts)[i];
    if (!ParseTrialState((*states)[i], &r.state)) {
      return Status::IoError("an attempt of trial " + std::to_string(r.number) + " has unknown state '" + (*states)[i] +
                             "'");
    }
    r.resumed_from = (*resumed)[i];
    r.checkpoint_step = (*checkpoints)[i];
    r.last_step = (*steps)[i];
    r.start_time = (*starts)[i];
    r.end_time = (*ends)[i];
    r.worker = (*workers)[i];
    r.host = (*hosts)[i];
    r.gpu = (*gpus)[i];
    r.exit_code = (*exits)[i];
    r.signal = (*signals)[i];
    r.peak_rss_kb = (*rss)[i];
    r.cpu_seconds = (*cpu)[i];
    r.gpu_seconds = (*gpu_s)[i];
    r.energy_j = (*energy)[i];
    r.reason = (*reasons)[i];
    study->attempts.push_back(std::move(r));
  }
  return Status::Ok();
}

Result<StudyData> ReadStudyFileOnce(const std::string& path, std::vector<size_t>* unsettled) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::InvalidInput(path + ": no such study file");
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidInput(path + ": a folder, not a study file: give a study's .h5 file");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return Status::InvalidInput(path + ": cannot read the study file: " + std::strerror(errno));
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    return Status::InvalidInput(
        path + ": not an HDF5 file (no HDF5 signature: a damaged study file, or no study file at all)");
  }
  // SWMR reading: the file may be growing under a running coordinator, or have been left by a
  // killed one. Files of the old format (schema 1) are opened plainly.
  Result<h5::Handle> file = h5::OpenForReading(path);
  if (!file.ok()) return DamagedStudy(path, file.status().message());  // an HDF5 signature, but no readable file
  const hid_t f = file->get();
  StudyData study;
  study.path = path;
  const htri_t has_schema = H5Aexists(f, "schema_version");
  if (has_schema == 0) return Status::InvalidInput(path + ": not a cleansweep study file (no schema_version)");
  Result<long long> schema = h5::ReadIntAttr(f, "schema_version");  // an IoError: damaged, see ReadStudyFile
  if (!schema.ok()) return schema.status().WithContext(path);
  study.schema_version = *schema;
  if (study.schema_version > kStudySchemaVersion) {
    return Status::InvalidInput(path + ": written with schema " + std::to_string(study.schema_version) +
                                "; this cleansweep reads up to " + std::to_string(kStudySchemaVersion) +
                                ": upgrade it");
  }
  Result<std::string> config_text = h5::ReadStringAttr(f, "config");
  Result<std::string> sampler = h5::ReadStringAttr(f, "sampler");
  Result<std::string> version = h5::ReadStringAttr(f, "cleansweep_version");
  Result<std::string> created = h5::ReadStringAttr(f, "created");
  Result<long long> seed = h5::ReadIntAttr(f, "seed");
  for (const Status& s : {config_text.status(), sampler.status(), version.status(), created.status(), seed.status()}) {
    if (!s.ok()) return s.WithContext(path);
  }
  std::string space_text;
  if (H5Aexists(f, "space") > 0) {
    CS_ASSIGN_OR_RETURN(space_text, h5::ReadStringAttr(f, "space"));
  }
  // Files since issue 15 carry CRC-32s of their texts (HDF5 does not checksum them): check them.
  for (const auto& [name, text] : {std::pair{"config_crc32", &*config_text}, std::pair{"space_crc32", &space_text}}) {
    if (H5Aexists(f, name) <= 0) continue;
    Result<long long> crc = h5::ReadIntAttr(f, name);
    if (!crc.ok()) return crc.status().WithContext(path);
    if (static_cast<std::uint32_t>(*crc) != Crc32(*text)) {
      return Status::IoError(std::string("the stored ") + (name[0] == 'c' ? "config" : "space") +
                             " does not match its checksum");
    }
  }
  Result<StudyConfig> config = LoadConfigText(*config_text, path + " (stored config)");
  if (!config.ok()) {
    return Status::InvalidInput(config.status().message() +
                                " (the stored config does not load: the file is damaged, or was written by a "
                                "cleansweep that accepted this config)");
  }
  study.config = std::move(*config);
  study.sampler = *sampler;
  study.cleansweep_version = *version;
  study.created = *created;
  study.seed = *seed;
  if (H5Aexists(f, "stop_reason") > 0) {  // files since study.stop_when
    Result<std::string> stop_reason = h5::ReadStringAttr(f, "stop_reason");
    if (!stop_reason.ok()) return stop_reason.status().WithContext(path);
    study.stop_reason = *stop_reason;
  }
  if (H5Aexists(f, "warm_start") > 0) {  // files since study.warm_start, when it was used
    Result<std::string> warm_start = h5::ReadStringAttr(f, "warm_start");
    if (!warm_start.ok()) return warm_start.status().WithContext(path);
    study.warm_start = *warm_start;
  }
  if (H5Aexists(f, "merged_from") > 0) {
    Result<std::string> merged_from = h5::ReadStringAttr(f, "merged_from");
    if (!merged_from.ok()) return merged_from.status().WithContext(path);
    study.merged_from = *merged_from;
  }
  if (H5Aexists(f, "config_history") > 0) {
    Result<std::string> history = h5::ReadStringAttr(f, "config_history");
    if (!history.ok()) return history.status().WithContext(path);
    study.config_history = *history;
  }
  CS_RETURN_IF_ERROR(ReadTrials(f, &study, unsettled).WithContext(path));
  CS_RETURN_IF_ERROR(ReadIntermediate(f, &study).WithContext(path));
  CS_RETURN_IF_ERROR(ReadAttempts(f, &study).WithContext(path));
  CS_RETURN_IF_ERROR(ReadTrialParams(f, &study).WithContext(path));
  return study;
}

// Reads the texts of the `unsettled` rows of /trials again, from the file opened anew (a heap
// address the last open did not reach may be in it now); keeps in `unsettled` the rows that are
// still caught in a write.
Status ReadUnsettledTexts(const std::string& path, StudyData* study, std::vector<size_t>* unsettled) {
  CS_ASSIGN_OR_RETURN(const h5::Handle file, h5::OpenForReading(path));
  CS_ASSIGN_OR_RETURN(const h5::Handle dataset,
                      h5::CheckId(H5Dopen2(file.get(), "trials", H5P_DEFAULT), path + ": missing dataset /trials"));
  const h5::Handle type = TextCellsType();
  std::vector<size_t> still;
  std::vector<TextCells> cells(kTextBlockRows);
  bool read[kTextBlockRows];
  // Runs of consecutive rows a block at a time: a damaged file can have every row here, and a
  // read per row took seconds for 20,000 rows (the reader's deadline, not the checksum, spoke).
  for (size_t k = 0; k < unsettled->size();) {
    size_t end = k + 1;
    while (end < unsettled->size() && end - k < kTextBlockRows && (*unsettled)[end] == (*unsettled)[end - 1] + 1) {
      ++end;
    }
    const size_t first = (*unsettled)[k];
    ReadTextBlock(dataset.get(), type.get(), first, end - k, cells.data(), read);
    for (size_t i = 0; i < end - k; ++i) {
      TrialRecord& r = study->trials[first + i];
      if (!TakeTexts(read[i], &cells[i], &r.reason, &r.output_tail, &r.attrs_json)) still.push_back(first + i);
    }
    k = end;
  }
  *unsettled = std::move(still);
  return Status::Ok();
}

}  // namespace

Result<StudyData> ReadStudyFileInProcess(const std::string& path) {
  h5::QuietErrors();
  // A file that a coordinator is writing can show its structure in the middle of a flush; read
  // again after it is flushed. The waits double (20 ms to 640 ms, 1.3 s in all): on a loaded
  // machine a flush can take longer than five reads 20 ms apart.
  std::vector<size_t> unsettled;
  Result<StudyData> study = ReadStudyFileOnce(path, &unsettled);
  for (int attempt = 0; attempt < 6 && !study.ok() && study.status().code() == Status::Code::kIoError; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 << attempt));
    study = ReadStudyFileOnce(path, &unsettled);
  }
  // Rows whose texts were caught in a write (a few, the newest): read again on their own, with the
  // same waits, until each agrees with its checksum.
  for (int attempt = 0; attempt < 6 && study.ok() && !unsettled.empty(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 << attempt));
    const Status again = ReadUnsettledTexts(path, &*study, &unsettled);
    if (!again.ok() && again.code() != Status::Code::kIoError) return again;
  }
  if (study.ok() && !unsettled.empty()) {
    const std::string first = "trial " + std::to_string(study->trials[unsettled.front()].number);
    return DamagedStudy(path, unsettled.size() == 1
                                  ? first + ": its texts (reason, output tail, attrs) do not match their checksum"
                                  : first + " and " + std::to_string(unsettled.size() - 1) +
                                        " more: their texts (reason, output tail, attrs) do not match their checksums");
  }
  // A file that opens but cannot be read back seven times over, 1.3 s in all, is damaged.
  if (!study.ok() && study.status().code() == Status::Code::kIoError)
    return DamagedStudy(path, study.status().message());
  return study;
}

Status DamagedStudy(const std::string& path, std::string what) {
  if (what.rfind(path + ": ", 0) == 0) what.erase(0, path.size() + 2);  // the path is said once
  return Status::InvalidInput(path + ": the study file is damaged: " + what +
                              "; use another copy (a backup, or the shard files it was merged from)");
}

}  // namespace cleansweep
