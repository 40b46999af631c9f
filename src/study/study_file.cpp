#include "study/study_file.hpp"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "study/hdf5_handle.hpp"
#include "study/table_layout.hpp"
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
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "pruner", config.pruner.kind));
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

// The HDF5 compound type of `layout`, used for the file and in memory alike.
h5::Handle CompoundType(const RowLayout& layout) {
  const size_t total = (layout.size() + 7) / 8 * 8;
  h5::Handle type(H5Tcreate(H5T_COMPOUND, total));
  h5::Handle text = h5::VarString();
  for (const Column& c : layout.columns()) {
    hid_t member = c.type == ColumnType::kInt32     ? H5T_NATIVE_INT32
                   : c.type == ColumnType::kInt64   ? H5T_NATIVE_INT64
                   : c.type == ColumnType::kFloat64 ? H5T_NATIVE_DOUBLE
                                                    : text.get();
    H5Tinsert(type.get(), c.name.c_str(), c.offset, member);
  }
  return type;
}

}  // namespace

struct StudyFile::Impl {
  Status Append(hid_t dataset, const RowLayout& layout, const RowBuffer& row, hsize_t* rows);

  std::string path;
  SearchSpace space;
  RowLayout trials_layout;
  RowLayout intermediate_layout;
  h5::Handle file;
  h5::Handle trials;
  h5::Handle intermediate;
  hsize_t trial_rows = 0;
  hsize_t intermediate_rows = 0;
};

StudyFile::StudyFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<StudyFile>> StudyFile::Create(const std::string& path, const StudyConfig& config) {
  h5::QuietErrors();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return Status::InvalidInput(path +
                                ": a study file already exists here; choose another study.storage "
                                "or study.name, or move the old file away (resuming comes in a later release)");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::create_directories(parent, ec) && ec) {
    return Status::IoError(parent.string() + ": cannot create the folder for the study file: " + ec.message());
  }
  auto file = std::make_unique<Impl>();
  file->path = path;
  file->space = config.space;
  file->trials_layout = TrialsLayout(config.space);
  file->intermediate_layout = IntermediateLayout();
  Status status = [&]() -> Status {
    Result<h5::Handle> f = h5::CheckId(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                                       path + ": cannot create the study file");
    if (!f.ok()) return f.status();
    file->file = std::move(*f);
    CS_RETURN_IF_ERROR(WriteMetadata(file->file.get(), config));
    Result<h5::Handle> trials = CreateTable(file->file.get(), "trials", CompoundType(file->trials_layout).get());
    if (!trials.ok()) return trials.status();
    file->trials = std::move(*trials);
    Result<h5::Handle> inter =
        CreateTable(file->file.get(), "intermediate", CompoundType(file->intermediate_layout).get());
    if (!inter.ok()) return inter.status();
    file->intermediate = std::move(*inter);
    return h5::CheckCall(H5Fflush(file->file.get(), H5F_SCOPE_LOCAL), path + ": cannot flush");
  }();
  if (!status.ok()) {
    file.reset();
    std::filesystem::remove(path, ec);
    return status;
  }
  return std::unique_ptr<StudyFile>(new StudyFile(std::move(file)));
}

StudyFile::~StudyFile() {
  if (impl_->file.valid()) H5Fflush(impl_->file.get(), H5F_SCOPE_LOCAL);
}

Status StudyFile::Impl::Append(hid_t dataset, const RowLayout& layout, const RowBuffer& row, hsize_t* rows) {
  const hsize_t new_size[1] = {*rows + 1};
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Dset_extent(dataset, new_size), path + ": cannot grow a table"));
  h5::Handle file_space(H5Dget_space(dataset));
  const hsize_t start[1] = {*rows}, count[1] = {1};
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  h5::Handle mem_space(H5Screate_simple(1, count, nullptr));
  h5::Handle type = CompoundType(layout);
  CS_RETURN_IF_ERROR(
      h5::CheckCall(H5Dwrite(dataset, type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, row.data()),
                    path + ": cannot write a row"));
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path + ": cannot flush"));
  ++*rows;
  return Status::Ok();
}

Status StudyFile::AppendTrial(const TrialRecord& r) {
  RowBuffer row(impl_->trials_layout);
  row.Set("number", r.number);
  row.Set("state", std::string(TrialStateName(r.state)));
  row.Set("value", r.value.value_or(kNaN));
  for (const ParamSpec& spec : impl_->space.params()) SetParam(&row, spec, r.params);
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
  row.Set("enqueued", std::int64_t{r.enqueued ? 1 : 0});
  row.Set("sampler_ms", r.sampler_ms);
  row.Set("last_step", r.last_step);
  row.Set("reason", r.reason);
  row.Set("output_tail", r.output_tail);
  row.Set("attrs", r.attrs_json);
  return impl_->Append(impl_->trials.get(), impl_->trials_layout, row, &impl_->trial_rows);
}

Status StudyFile::AppendIntermediate(const IntermediateValue& v) {
  RowBuffer row(impl_->intermediate_layout);
  row.Set("trial", v.trial);
  row.Set("step", v.step);
  row.Set("value", v.value);
  row.Set("time", v.time);
  return impl_->Append(impl_->intermediate.get(), impl_->intermediate_layout, row, &impl_->intermediate_rows);
}

}  // namespace cleansweep
