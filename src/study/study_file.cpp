#include "study/study_file.hpp"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "util/version.hpp"

namespace cleansweep {
namespace {

constexpr hsize_t kChunkRows = 64;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string NowIso8601() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<h5::Handle> CreateTable(hid_t file, const char* name, hid_t type) {
  const hsize_t dims[1] = {0}, max_dims[1] = {H5S_UNLIMITED}, chunk[1] = {kChunkRows};
  h5::Handle space(H5Screate_simple(1, dims, max_dims));
  h5::Handle props(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(props.get(), 1, chunk);
  return h5::CheckId(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
                     std::string("cannot create dataset ") + name);
}

Status WriteMetadata(hid_t file, const StudyConfig& config) {
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "schema_version", static_cast<long long>(kStudySchemaVersion)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "cleansweep_version", std::string(kVersion)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "study_name", config.study.name));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "direction", std::string(DirectionName(config.study.direction))));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "metric", config.study.metric));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "sampler", config.sampler.kind));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "seed", static_cast<long long>(config.sampler.seed)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "created", NowIso8601()));
  return h5::WriteAttr(file, "config", config.yaml_text);
}

void SetParam(RowBuffer* row, const ParamSpec& spec, const ParamSet& params) {
  const auto it = params.find(spec.name);
  const std::string column = ParamColumn(spec.name);
  switch (ParamColumnType(spec)) {
    case ColumnType::kString:
      row->Set(column, it == params.end() ? std::string() : FormatValue(it->second));
      break;
    case ColumnType::kInt64:
      row->Set(column, it == params.end() ? std::int64_t{0} : static_cast<std::int64_t>(AsNumber(it->second)));
      break;
    default:
      row->Set(column, it == params.end() ? kNaN : AsNumber(it->second));
      break;
  }
}

}  // namespace

Result<std::unique_ptr<StudyFile>> StudyFile::Create(const std::string& path, const StudyConfig& config) {
  h5::QuietErrors();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return Status::InvalidInput(path + ": a study file already exists here; choose another study.storage "
                                "or study.name, or move the old file away (resuming comes in a later release)");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::create_directories(parent, ec) && ec) {
    return Status::IoError(parent.string() + ": cannot create the folder for the study file: " + ec.message());
  }
  std::unique_ptr<StudyFile> file(new StudyFile());
  file->path_ = path;
  file->space_ = config.space;
  file->trials_layout_ = TrialsLayout(config.space);
  file->intermediate_layout_ = IntermediateLayout();
  Status status = [&]() -> Status {
    Result<h5::Handle> f = h5::CheckId(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                                       path + ": cannot create the study file");
    if (!f.ok()) return f.status();
    file->file_ = std::move(*f);
    CS_RETURN_IF_ERROR(WriteMetadata(file->file_.get(), config));
    file->trials_type_ = file->trials_layout_.MakeType();
    file->intermediate_type_ = file->intermediate_layout_.MakeType();
    Result<h5::Handle> trials = CreateTable(file->file_.get(), "trials", file->trials_type_.get());
    if (!trials.ok()) return trials.status();
    file->trials_ = std::move(*trials);
    Result<h5::Handle> inter = CreateTable(file->file_.get(), "intermediate", file->intermediate_type_.get());
    if (!inter.ok()) return inter.status();
    file->intermediate_ = std::move(*inter);
    return h5::CheckCall(H5Fflush(file->file_.get(), H5F_SCOPE_LOCAL), path + ": cannot flush");
  }();
  if (!status.ok()) {
    file.reset();
    std::filesystem::remove(path, ec);
    return status;
  }
  return file;
}

StudyFile::~StudyFile() {
  if (file_.valid()) H5Fflush(file_.get(), H5F_SCOPE_LOCAL);
}

Status StudyFile::Append(hid_t dataset, const RowLayout& layout, const RowBuffer& row, hsize_t* rows) {
  const hsize_t new_size[1] = {*rows + 1};
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Dset_extent(dataset, new_size), path_ + ": cannot grow a table"));
  h5::Handle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {*rows}, count[1] = {1};
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  h5::Handle mem_space(H5Screate_simple(1, count, nullptr));
  h5::Handle type = layout.MakeType();
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Dwrite(dataset, type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, row.data()),
                                   path_ + ": cannot write a row"));
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), path_ + ": cannot flush"));
  ++*rows;
  return Status::Ok();
}

Status StudyFile::AppendTrial(const TrialRecord& r) {
  RowBuffer row(trials_layout_);
  row.Set("number", r.number);
  row.Set("state", std::string(TrialStateName(r.state)));
  row.Set("value", r.value.value_or(kNaN));
  for (const ParamSpec& spec : space_.params()) SetParam(&row, spec, r.params);
  row.Set("datetime_start", r.start_time);
  row.Set("datetime_end", r.end_time);
  row.Set("duration", r.duration());
  row.Set("worker", std::int64_t{r.worker});
  row.Set("host", r.host);
  row.Set("gpu", r.gpu);
  row.Set("exit_code", std::int64_t{r.exit_code});
  row.Set("signal", std::int64_t{r.signal});
  row.Set("peak_rss_kb", r.peak_rss_kb);
  row.Set("attempt", std::int64_t{r.attempt});
  row.Set("last_step", r.last_step);
  row.Set("reason", r.reason);
  row.Set("output_tail", r.output_tail);
  row.Set("attrs", r.attrs_json);
  return Append(trials_.get(), trials_layout_, row, &trial_rows_);
}

Status StudyFile::AppendIntermediate(const IntermediateValue& v) {
  RowBuffer row(intermediate_layout_);
  row.Set("trial", v.trial);
  row.Set("step", v.step);
  row.Set("value", v.value);
  row.Set("time", v.time);
  return Append(intermediate_.get(), intermediate_layout_, row, &intermediate_rows_);
}

}  // namespace cleansweep
