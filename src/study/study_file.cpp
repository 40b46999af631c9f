#include "study/study_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "study/hdf5_handle.hpp"
#include "study/table_layout.hpp"
#include "util/crc32.hpp"
#include "util/json_limits.hpp"
#include "util/output_file.hpp"
#include "util/unique_fd.hpp"
#include "util/version.hpp"

namespace cleansweep {
namespace {

constexpr hsize_t kChunkRows = 64;

// How long a resume waits for a reader that holds HDF5's lock on the study file to let go.
constexpr std::chrono::seconds kLockedFileWait(10);
// Space kept allocated past the end of the file, renewed when half of it is used: one turn writes
// at most 256 results' rows (output tails included, under 3 MiB) plus HDF5's metadata.
constexpr size_t kFlushReserveBytes = size_t{8} << 20;
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
  h5::Must(H5Pset_chunk(props.get(), 1, chunk));
  // A checksum on every chunk: rows hold the lengths and heap addresses of their text cells, and
  // a damaged chunk must be refused, not followed (HDF5 checksums metadata, not raw data).
  h5::Must(H5Pset_fletcher32(props.get()));
  return h5::CheckId(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT),
                     std::string("cannot create dataset ") + name);
}

// The root attributes that restate the config, as text: h5py and pandas read these, `show` reads
// the config; both are written from one config, at creation and whenever a resume changes it.
std::map<std::string, std::string> ConfigAttrs(const StudyConfig& config) {
  return {{"study_name", config.study.name},
          {"direction", DirectionName(config.study.direction)},
          {"metric", config.study.metric},
          {"sampler", config.sampler.kind},
          {"pruner", config.pruner.kind},
          {"space", SpaceJson(config.space)},
          {"config", config.yaml_text},
          {"metrics", MetricsJson(config.study)},
          {"sampler_reason", config.sampler.reason}};
}

// HDF5 keeps a text attribute's bytes in its global heap, which has no checksum: the CRC-32 of
// the config and the space, in integer attributes (kept in the checksummed object header), lets
// readers refuse a damaged config instead of parsing garbage.
Status WriteTextChecksums(hid_t file, const StudyConfig& config) {
  for (const auto& [name, text] :
       {std::pair{"config_crc32", config.yaml_text}, std::pair{"space_crc32", SpaceJson(config.space)}}) {
    CS_RETURN_IF_ERROR(h5::DeleteAttrIfPresent(file, name));
    CS_RETURN_IF_ERROR(h5::WriteAttr(file, name, static_cast<long long>(Crc32(text))));
  }
  return Status::Ok();
}

// The root attribute `stop_reason`: fixed-size, so that a SWMR writer can rewrite it.
constexpr size_t kStopReasonBytes = 1024;

Status WriteMetadata(hid_t file, const StudyConfig& config, const std::map<std::string, std::string>& notes) {
  for (const auto& [name, text] : notes) CS_RETURN_IF_ERROR(h5::WriteAttr(file, name.c_str(), text));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "schema_version", static_cast<long long>(kStudySchemaVersion)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "cleansweep_version", std::string(kVersion)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "seed", static_cast<long long>(config.sampler.seed)));
  CS_RETURN_IF_ERROR(h5::WriteAttr(file, "created", NowIso8601()));
  for (const auto& [name, text] : ConfigAttrs(config)) CS_RETURN_IF_ERROR(h5::WriteAttr(file, name.c_str(), text));
  CS_RETURN_IF_ERROR(h5::WriteFixedStringAttr(file, "stop_reason", "", kStopReasonBytes));
  return WriteTextChecksums(file, config);
}

// A resume that changed the config (--set, --force): every attribute that restates it is
// rewritten, and one entry appended to the JSON list in `config_history`: when, by which
// version, and what changed ("sampler: random -> tpe"; the config text itself is in `config`).
Status RewriteConfigAttrs(hid_t file, const StudyConfig& config) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& [name, text] : ConfigAttrs(config)) {
    const Result<std::string> stored = h5::ReadStringAttr(file, name.c_str());
    if (stored.ok() && *stored == text) continue;
    // An attribute newer than the file (sampler_reason) that has nothing to say is no change.
    if (stored.ok() || !text.empty())
      changes.push_back(name == "config" || name == "space"
                            ? name + " replaced"
                            : name + ": " + (stored.ok() ? *stored : "") + " -> " + text);
    CS_RETURN_IF_ERROR(h5::DeleteAttrIfPresent(file, name.c_str()));
    CS_RETURN_IF_ERROR(h5::WriteAttr(file, name.c_str(), text));
  }
  const auto seed = static_cast<long long>(config.sampler.seed);
  if (const Result<long long> stored = h5::ReadIntAttr(file, "seed"); !stored.ok() || *stored != seed) {
    changes.push_back("seed: " + (stored.ok() ? std::to_string(*stored) : std::string()) + " -> " +
                      std::to_string(seed));
    CS_RETURN_IF_ERROR(h5::DeleteAttrIfPresent(file, "seed"));
    CS_RETURN_IF_ERROR(h5::WriteAttr(file, "seed", seed));
  }
  if (changes.empty()) return Status::Ok();
  CS_RETURN_IF_ERROR(WriteTextChecksums(file, config));
  nlohmann::json history = nlohmann::json::array();
  if (const Result<std::string> stored = h5::ReadStringAttr(file, "config_history"); stored.ok()) {
    Result<nlohmann::json> earlier = ParseUntrustedJson(*stored);  // the file is input: bounded depth
    if (earlier.ok() && earlier->is_array()) history = std::move(*earlier);
  }
  history.push_back({{"at", NowIso8601()}, {"cleansweep_version", kVersion}, {"changes", changes}});
  CS_RETURN_IF_ERROR(h5::DeleteAttrIfPresent(file, "config_history"));
  return h5::WriteAttr(file, "config_history", history.dump());
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
    if (c.type == ColumnType::kString && c.length > 0) {
      h5::Handle fixed = h5::FixedString(c.length);
      h5::Must(H5Tinsert(type.get(), c.name.c_str(), c.offset, fixed.get()));  // copies the member type
      continue;
    }
    hid_t member = c.type == ColumnType::kInt32     ? H5T_NATIVE_INT32
                   : c.type == ColumnType::kInt64   ? H5T_NATIVE_INT64
                   : c.type == ColumnType::kFloat64 ? H5T_NATIVE_DOUBLE
                                                    : text.get();
    h5::Must(H5Tinsert(type.get(), c.name.c_str(), c.offset, member));
  }
  return type;
}

}  // namespace

struct StudyFile::Impl {
  // Rows written but not yet in the file, by row index, for one table. Flush() writes all of a
  // table's pending rows with one H5Dwrite (finding HDF5's conversion path for a compound type
  // costs more than writing a row), then flushes the file once.
  using Pending = std::map<hsize_t, RowBuffer>;
  // Puts `row` at `index` (a table grows when index == *rows) and flushes, unless deferred.
  Status WriteRow(Pending* pending, RowBuffer row, hsize_t index, hsize_t* rows);
  Status WritePending(hid_t dataset, hid_t type, Pending* pending, hsize_t rows, hsize_t* extent);
  Status Flush();
  // Before a flush: the file must still be the one we opened (not removed or replaced), and the
  // space the flush may need is reserved, so a full disk fails here, before any byte is written,
  // instead of in the middle of HDF5's metadata writes (which tears the file).
  Status CheckAndReserve();
  Status FlushReserved();
  // Set after a failed write or flush: nothing more is written, and the file is not closed
  // through HDF5 (which would try to flush it again); it stays as the last good flush left it.
  bool broken = false;
  off_t reserved_until = 0;  // the file's blocks are allocated up to here

  Pending pending_trials;
  Pending pending_intermediate;
  Pending pending_attempts;
  Pending pending_params;
  hsize_t trial_extent = 0;  // rows the datasets have in the file
  hsize_t intermediate_extent = 0;
  hsize_t attempt_extent = 0;
  hsize_t param_extent = 0;

  bool defer_flush = false;
  bool dirty = false;  // written since the last flush
  // A writer for `path` under `lock`, with the layouts of `config`'s space; no file open yet.
  static std::unique_ptr<Impl> Make(const std::string& path, StudyLock lock, const StudyConfig& config);
  Status StartSwmr();

  std::string path;
  StudyLock lock;
  SearchSpace space;
  StudyOptions study;  // its metrics shape the tables
  RowLayout trials_layout;
  RowLayout intermediate_layout;
  RowLayout attempts_layout;
  RowLayout params_layout;
  h5::Handle file;
  h5::Handle trials;
  h5::Handle intermediate;
  h5::Handle attempts;
  h5::Handle params;
  h5::Handle trials_type;
  h5::Handle intermediate_type;
  h5::Handle attempts_type;
  h5::Handle params_type;
  h5::Handle write_props;  // dataset transfer: a conversion buffer sized for one row
  hsize_t trial_rows = 0;
  hsize_t intermediate_rows = 0;
  hsize_t attempt_rows = 0;
  hsize_t param_rows = 0;
  std::map<std::int64_t, hsize_t> row_of;  // trial number -> row in /trials
};

namespace {

// SWMR needs the 1.10 file format; h5py reads it with HDF5 >= 1.10.
h5::Handle LatestFormatAccess(bool clear_crash_flags) {
  h5::Handle fapl = h5::FileAccess(/*latest_format=*/true);
  if (clear_crash_flags) {
    // What `h5clear -s` does: a writer that was killed leaves "open for writing" in the
    // superblock; we hold the study lock, so that writer is gone.
    hbool_t clear = 1;
    h5::Must(H5Pset(fapl.get(), "clear_status_flags", &clear));
  }
  return fapl;
}

void RestrictPermissions(const std::string& path) {
  std::error_code ec;  // readable by all, writable by the owner only, whatever the umask
  std::filesystem::permissions(path, std::filesystem::perms::group_write | std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove, ec);
}

// After a rename in `folder`: the new name survives a crash of the machine. Best effort, as a
// file system may refuse fsync on a folder; the file's own content is flushed by HDF5.
void SyncFolder(const std::filesystem::path& folder) {
  const UniqueFd fd(
      RetryOnEintr([&] { return ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (fd.valid()) RetryOnEintr([&] { return ::fsync(fd.get()); });
}

}  // namespace

std::unique_ptr<StudyFile::Impl> StudyFile::Impl::Make(const std::string& path, StudyLock lock,
                                                       const StudyConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->lock = std::move(lock);
  impl->space = config.space;
  impl->study = config.study;
  impl->trials_layout = TrialsLayout(config.space, config.study);
  impl->intermediate_layout = IntermediateLayout(config.study);
  impl->trials_type = CompoundType(impl->trials_layout);
  impl->intermediate_type = CompoundType(impl->intermediate_layout);
  impl->attempts_layout = AttemptsLayout();
  impl->attempts_type = CompoundType(impl->attempts_layout);
  impl->params_layout = ParamsLayout();
  impl->params_type = CompoundType(impl->params_layout);
  // One row per write: a conversion buffer of a few rows, not HDF5's default 1 MiB, which it
  // would allocate and zero (twice) for every row written.
  impl->write_props = h5::Handle(H5Pcreate(H5P_DATASET_XFER));
  const size_t row_bytes = std::max({H5Tget_size(impl->trials_type.get()), H5Tget_size(impl->intermediate_type.get()),
                                     H5Tget_size(impl->attempts_type.get()), H5Tget_size(impl->params_type.get())});
  h5::Must(H5Pset_buffer(impl->write_props.get(), 4 * row_bytes, nullptr, nullptr));
  return impl;
}

Status StudyFile::Impl::StartSwmr() {
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path + ": cannot flush"));
  return h5::CheckCall(H5Fstart_swmr_write(file.get()), path + ": cannot start SWMR writing");
}

StudyFile::StudyFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

void KeepHdf5OpenAtExit() { h5::DontCloseAtExit(); }

Result<std::unique_ptr<StudyFile>> StudyFile::Create(const std::string& path, const StudyConfig& config,
                                                     const std::map<std::string, std::string>& notes) {
  h5::QuietErrors();
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::create_directories(parent, ec) && ec) {
    return Status::IoError(parent.string() + ": cannot create the folder for the study file: " + ec.message());
  }
  Result<StudyLock> lock = StudyLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  const auto exists = [&] {
    return Status::InvalidInput(path +
                                ": a study file already exists here; continue it with --resume, choose another "
                                "study.storage or study.name, or move the old file away");
  };
  // A joined shard (run --join) claimed its index with an empty file (ClaimStudyFile): that one
  // is ours to fill; anything else at the path is another study's.
  const bool claimed = config.study.shard.joined && std::filesystem::is_regular_file(path, ec) &&
                       std::filesystem::file_size(path, ec) == 0 && !ec;
  if (!claimed && std::filesystem::exists(path, ec)) return exists();
  std::unique_ptr<Impl> file = Impl::Make(path, std::move(*lock), config);
  // The file is made under a hidden name beside it and renamed into place once SWMR writing has
  // started. A reader that waits for the study file (a monitoring loop, `watch cleansweep show`)
  // would otherwise open it in the moments between its creation and SWMR writing: HDF5 locks a
  // file while it opens it, and that reader's lock makes the writer's own lock fail, which ended
  // the run. Under the study's lock nobody else makes this file: one left by a killed run goes.
  const std::filesystem::path target(path);
  const std::string staging = (target.parent_path() / ("." + target.filename().string() + ".creating")).string();
  std::filesystem::remove(staging, ec);
  Status status = [&]() -> Status {
    h5::Handle fapl = LatestFormatAccess(false);
    Result<h5::Handle> f = h5::CheckId(H5Fcreate(staging.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()),
                                       path + ": cannot create the study file (as " + staging + ")");
    if (!f.ok()) return f.status();
    file->file = std::move(*f);
    RestrictPermissions(staging);
    CS_RETURN_IF_ERROR(WriteMetadata(file->file.get(), config, notes));
    Result<h5::Handle> trials = CreateTable(file->file.get(), "trials", file->trials_type.get());
    if (!trials.ok()) return trials.status();
    file->trials = std::move(*trials);
    Result<h5::Handle> inter = CreateTable(file->file.get(), "intermediate", file->intermediate_type.get());
    if (!inter.ok()) return inter.status();
    file->intermediate = std::move(*inter);
    Result<h5::Handle> attempts = CreateTable(file->file.get(), "attempts", file->attempts_type.get());
    if (!attempts.ok()) return attempts.status();
    file->attempts = std::move(*attempts);
    Result<h5::Handle> params = CreateTable(file->file.get(), "params", file->params_type.get());
    if (!params.ok()) return params.status();
    file->params = std::move(*params);
    CS_RETURN_IF_ERROR(file->StartSwmr());
    // Never over a file another program put at the path meanwhile (the study lock binds only us).
    if (claimed) {
      std::filesystem::rename(staging, path, ec);  // over the empty claim, in one step
      if (ec) return Status::IoError(path + ": cannot put the study file in place: " + ec.message());
    } else if (Status moved = RenameNoReplace(staging, path); !moved.ok()) {
      return moved.code() == Status::Code::kInvalidInput ? exists() : moved;
    }
    SyncFolder(target.parent_path());  // the name as durable as the file's first flush
    return Status::Ok();
  }();
  if (!status.ok()) {
    file->trials.Reset();
    file->intermediate.Reset();
    file->attempts.Reset();
    file->params.Reset();
    file->file.Reset();
    std::filesystem::remove(staging, ec);
    return status;
  }
  return std::unique_ptr<StudyFile>(new StudyFile(std::move(file)));
}

Result<std::unique_ptr<StudyFile>> StudyFile::Reopen(const std::string& path, const StudyConfig& config) {
  h5::QuietErrors();
  Result<StudyLock> lock = StudyLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  std::unique_ptr<Impl> file = Impl::Make(path, std::move(*lock), config);
  // A writer outside SWMR mode marks the file "open for writing" and no reader can open it until
  // it closes; killed in that state it leaves the file unreadable until repaired. So when the
  // stored config and space are already the ones given (a requeued or plainly resumed run), the
  // file is opened straight into SWMR writing and there is no such moment at all; only a config
  // changed by --set opens it plainly for the few milliseconds its attributes take.
  const bool unchanged = [&] {
    Result<h5::Handle> r = h5::OpenForReading(path);
    if (!r.ok()) return false;
    const Result<std::string> stored_config = h5::ReadStringAttr(r->get(), "config");
    const Result<std::string> stored_space = h5::ReadStringAttr(r->get(), "space");
    // A file from before stop_reason existed needs it added, which only a plain writer can do.
    // So does one from before /attempts existed.
    return stored_config.ok() && *stored_config == config.yaml_text && stored_space.ok() &&
           *stored_space == SpaceJson(config.space) && H5Aexists(r->get(), "stop_reason") > 0 &&
           H5Lexists(r->get(), "attempts", H5P_DEFAULT) > 0 && H5Lexists(r->get(), "params", H5P_DEFAULT) > 0;
  }();
  const h5::Handle fapl = LatestFormatAccess(true);
  // HDF5 locks the file while a reader opens it (and for as long as a reader without SWMR keeps it
  // open), and a writer is refused meanwhile: a monitoring loop's reader goes away in moments.
  const auto open = [&](unsigned flags) -> Result<h5::Handle> {
    const std::string what = path + ": cannot open the study file to resume it";
    Result<h5::Handle> f = h5::CheckId(H5Fopen(path.c_str(), flags, fapl.get()), what);
    const auto give_up = std::chrono::steady_clock::now() + kLockedFileWait;
    while (!f.ok() && f.status().message().find("unable to lock file") != std::string::npos &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      f = h5::CheckId(H5Fopen(path.c_str(), flags, fapl.get()), what);
    }
    if (!f.ok() && f.status().message().find("unable to lock file") != std::string::npos) {
      return Status::IoError(path + ": another program has the study file open (a reader that does not use SWMR, " +
                             "such as h5py.File(path) without swmr=True, or HDFView) and HDF5 refuses to write it " +
                             "meanwhile; close that program, or read with swmr=True, and resume again (" +
                             f.status().message() + ")");
    }
    if (!f.ok()) return f.status();
    Result<long long> schema = h5::ReadIntAttr(f->get(), "schema_version");
    if (!schema.ok() || *schema != kStudySchemaVersion) {
      return Status::InvalidInput(path + ": written with study-file schema " +
                                  (schema.ok() ? std::to_string(*schema) : std::string("(none)")) +
                                  "; this cleansweep resumes schema " + std::to_string(kStudySchemaVersion) +
                                  " only. Start a new study (the old file stays readable with cleansweep show)");
    }
    return f;
  };
  if (!unchanged) {
    // What only a plain writer can do (attributes rewritten, a table added) is done first and the
    // file closed; then it is opened straight into SWMR writing like an unchanged one. Starting
    // SWMR writing on the plain handle instead takes the file's lock again, and a reader that
    // opened it in that moment made the resume fail ("unable to lock file").
    Result<h5::Handle> plain = open(H5F_ACC_RDWR);
    if (!plain.ok()) return plain.status();
    CS_RETURN_IF_ERROR(RewriteConfigAttrs(plain->get(), config));
    if (H5Aexists(plain->get(), "stop_reason") <= 0) {
      CS_RETURN_IF_ERROR(h5::WriteFixedStringAttr(plain->get(), "stop_reason", "", kStopReasonBytes));
    }
    if (H5Lexists(plain->get(), "attempts", H5P_DEFAULT) <= 0) {  // a file from before checkpoints
      CS_RETURN_IF_ERROR(CreateTable(plain->get(), "attempts", file->attempts_type.get()).status());
    }
    if (H5Lexists(plain->get(), "params", H5P_DEFAULT) <= 0) {  // a file from before define-by-run
      CS_RETURN_IF_ERROR(CreateTable(plain->get(), "params", file->params_type.get()).status());
    }
    CS_RETURN_IF_ERROR(h5::CheckCall(H5Fflush(plain->get(), H5F_SCOPE_LOCAL), path + ": cannot flush"));
  }
  Result<h5::Handle> f = open(H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
  if (!f.ok()) return f.status();
  file->file = std::move(*f);
  for (auto [name, handle, rows] : {std::tuple{"trials", &file->trials, &file->trial_rows},
                                    std::tuple{"intermediate", &file->intermediate, &file->intermediate_rows}}) {
    Result<h5::Handle> d =
        h5::CheckId(H5Dopen2(file->file.get(), name, H5P_DEFAULT), path + ": missing dataset /" + std::string(name));
    if (!d.ok()) return d.status();
    *handle = std::move(*d);
    // An older file may lack columns added since (datetime_worker_free, the cost): its rows go on
    // without them.
    if (std::string(name) == "trials") {
      const h5::Handle type(H5Dget_type(handle->get()));
      std::set<std::string> absent;
      for (const char* later : kLaterTrialColumns) {
        if (type.valid() && H5Tget_member_index(type.get(), later) < 0) absent.insert(later);
      }
      if (type.valid() && H5Tget_member_index(type.get(), kTextChecksumColumn) < 0) absent.insert(kTextChecksumColumn);
      for (const char* later : kLaterStepColumns) {
        if (type.valid() && H5Tget_member_index(type.get(), later) < 0) absent.insert(later);
      }
      if (type.valid() && H5Tget_member_index(type.get(), "gpus") < 0) absent.insert("gpus");
      if (!absent.empty()) {
        file->trials_layout = TrialsLayout(file->space, file->study, absent);
        file->trials_type = CompoundType(file->trials_layout);
      }
    }
    // Unread, the row count would stay 0 and new rows would be written over the old ones.
    CS_ASSIGN_OR_RETURN(*rows, h5::RowCount(handle->get(), path + ": /" + std::string(name)));
  }
  CS_ASSIGN_OR_RETURN(file->attempts, h5::CheckId(H5Dopen2(file->file.get(), "attempts", H5P_DEFAULT),
                                                  path + ": missing dataset /attempts"));
  CS_ASSIGN_OR_RETURN(file->attempt_rows, h5::RowCount(file->attempts.get(), path + ": /attempts"));
  CS_ASSIGN_OR_RETURN(
      file->params, h5::CheckId(H5Dopen2(file->file.get(), "params", H5P_DEFAULT), path + ": missing dataset /params"));
  CS_ASSIGN_OR_RETURN(file->param_rows, h5::RowCount(file->params.get(), path + ": /params"));
  file->param_extent = file->param_rows;
  file->trial_extent = file->trial_rows;
  file->intermediate_extent = file->intermediate_rows;
  file->attempt_extent = file->attempt_rows;
  // Which row holds which trial, from the number column.
  std::vector<std::int64_t> numbers(file->trial_rows);
  if (!numbers.empty()) {
    h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(std::int64_t)));
    h5::Must(H5Tinsert(type.get(), "number", 0, H5T_NATIVE_INT64));
    CS_RETURN_IF_ERROR(
        h5::CheckCall(H5Dread(file->trials.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, numbers.data()),
                      path + ": cannot read the trial numbers"));
  }
  for (hsize_t row = 0; row < numbers.size(); ++row) file->row_of[numbers[row]] = row;
  return std::unique_ptr<StudyFile>(new StudyFile(std::move(file)));
}

StudyFile::~StudyFile() {
  if (impl_->file.valid() && !impl_->broken) CS_IGNORE_ERROR(impl_->Flush());  // the caller saw any error already
  if (impl_->broken) {
    // HDF5 would flush again on close and fail (or crash at exit); the file keeps its last good
    // flush, which SWMR readers and a resume read. The descriptors go with the process.
    (void)impl_->trials.release();
    (void)impl_->intermediate.release();
    (void)impl_->attempts.release();
    (void)impl_->params.release();
    (void)impl_->file.release();
    return;
  }
  impl_->trials.Reset();
  impl_->intermediate.Reset();
  impl_->attempts.Reset();
  impl_->params.Reset();
  impl_->file.Reset();  // closing clears the "open for writing" flag; then the lock goes
}

Status StudyFile::Impl::WriteRow(Pending* pending, RowBuffer row, hsize_t index, hsize_t* rows) {
  pending->erase(index);  // a row written twice before a flush: the later one wins
  pending->emplace(index, std::move(row));
  if (index >= *rows) *rows = index + 1;
  dirty = true;
  return defer_flush ? Status::Ok() : Flush();
}

Status StudyFile::Impl::WritePending(hid_t dataset, hid_t type, Pending* pending, hsize_t rows, hsize_t* extent) {
  if (pending->empty()) return Status::Ok();
  if (rows > *extent) {
    const hsize_t new_size[1] = {rows};
    CS_RETURN_IF_ERROR(h5::CheckCall(H5Dset_extent(dataset, new_size), path + ": cannot grow a table"));
    *extent = rows;
  }
  const size_t stride = H5Tget_size(type);
  std::vector<unsigned char> bytes(stride * pending->size());
  std::vector<hsize_t> coords;
  coords.reserve(pending->size());
  for (const auto& [index, row] : *pending) {
    std::memcpy(bytes.data() + stride * coords.size(), row.data(), std::min(stride, row.size()));
    coords.push_back(index);
  }
  h5::Handle file_space(H5Dget_space(dataset));
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Sselect_elements(file_space.get(), H5S_SELECT_SET, coords.size(), coords.data()),
                                   path + ": cannot select the rows to write"));
  const hsize_t count[1] = {coords.size()};
  h5::Handle mem_space(H5Screate_simple(1, count, nullptr));
  CS_RETURN_IF_ERROR(
      h5::CheckCall(H5Dwrite(dataset, type, mem_space.get(), file_space.get(), write_props.get(), bytes.data()),
                    path + ": cannot write " + std::to_string(coords.size()) + " row(s)"));
  pending->clear();
  return Status::Ok();
}

Status StudyFile::Impl::CheckAndReserve() {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) return Status::Ok();
  const int fd = *static_cast<int*>(handle);  // the sec2 driver's descriptor
  struct stat open_file {};
  struct stat named_file {};
  if (::fstat(fd, &open_file) != 0)
    return Status::IoError(path + ": cannot stat the study file: " + std::strerror(errno));
  if (open_file.st_nlink == 0 || ::stat(path.c_str(), &named_file) != 0 || named_file.st_ino != open_file.st_ino ||
      named_file.st_dev != open_file.st_dev) {
    return Status::IoError(path +
                           ": the study file was removed or replaced while the sweep ran; the rows so far "
                           "are in the file that was there (if it still exists anywhere)");
  }
  // A file made read-only or immutable (chattr +i) is refused here, before HDF5 writes a byte.
  if (::access(path.c_str(), W_OK) != 0) {
    return Status::IoError(path + ": the study file cannot be written any more (" + std::strerror(errno) +
                           "); every row written so far is in the file: make it writable again, then cleansweep "
                           "resume " +
                           path);
  }
  // Reserved in steps: again only when less than half the reserve is left past the end.
  if (open_file.st_size + static_cast<off_t>(kFlushReserveBytes / 2) <= reserved_until) return Status::Ok();
  const off_t want = open_file.st_size + static_cast<off_t>(kFlushReserveBytes);
  // KEEP_SIZE: the blocks are allocated past the end without moving it (HDF5 checks the size).
  const int rc = RetryOnEintr([&] { return ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, want); });
  if (rc == 0) reserved_until = want;
  if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
    const bool full = errno == ENOSPC || errno == EDQUOT;
    return Status::IoError(path + ": cannot reserve " + std::to_string(kFlushReserveBytes >> 20) +
                           " MiB for the next write of the study file: " + std::strerror(errno) +
                           "; every row written so far is in the file: " +
                           (full ? "free space" : "make the file writable again") + ", then cleansweep resume " + path);
  }
  return Status::Ok();
}

Status StudyFile::Impl::Flush() {
  if (!dirty) return Status::Ok();
  if (broken) return Status::IoError(path + ": not written after an earlier write failure");
  Status status = CheckAndReserve();
  if (status.ok()) {
    status = FlushReserved();
    if (!status.ok()) {  // an I/O error HDF5 met while writing: the file may lack this turn's rows
      status = Status::IoError(path + ": writing the study file failed; the rows of earlier turns are in it: fix " +
                               "the cause, then cleansweep resume " + path + " (" + status.message() + ")");
    }
  }
  if (!status.ok()) broken = true;
  return status;
}

Status StudyFile::Impl::FlushReserved() {
  CS_RETURN_IF_ERROR(WritePending(trials.get(), trials_type.get(), &pending_trials, trial_rows, &trial_extent));
  CS_RETURN_IF_ERROR(WritePending(intermediate.get(), intermediate_type.get(), &pending_intermediate, intermediate_rows,
                                  &intermediate_extent));
  CS_RETURN_IF_ERROR(
      WritePending(attempts.get(), attempts_type.get(), &pending_attempts, attempt_rows, &attempt_extent));
  CS_RETURN_IF_ERROR(WritePending(params.get(), params_type.get(), &pending_params, param_rows, &param_extent));
  CS_RETURN_IF_ERROR(h5::CheckCall(H5Fflush(file.get(), H5F_SCOPE_LOCAL), path + ": cannot flush"));
  dirty = false;
  return Status::Ok();
}

void StudyFile::DeferFlush(bool defer) { impl_->defer_flush = defer; }

Status StudyFile::Flush() { return impl_->Flush(); }

Status StudyFile::RecordStopReason(const std::string& reason) {
  const Result<std::string> stored = h5::ReadStringAttr(impl_->file.get(), "stop_reason");
  if (stored.ok() && *stored == reason) return Status::Ok();
  return h5::WriteFixedStringAttr(impl_->file.get(), "stop_reason", reason, kStopReasonBytes).WithContext(impl_->path);
}

Status StudyFile::PutTrial(const TrialRecord& r) {
  RowBuffer row(impl_->trials_layout);
  row.Set("number", r.number);
  row.Set("state", std::string(TrialStateName(r.state)));
  row.Set("value", r.value.value_or(kNaN));
  if (impl_->study.multi_objective()) {
    const std::vector<Metric>& metrics = impl_->study.metrics;
    for (size_t i = 0; i < metrics.size(); ++i) {
      row.Set(MetricColumn(metrics[i].name), i < r.values.size() ? r.values[i] : kNaN);
    }
    row.Set("pareto", std::int64_t{r.pareto ? 1 : 0});
  }
  for (const ParamSpec& spec : impl_->space.params()) SetParam(&row, spec, r.params);
  row.Set("datetime_start", r.start_time);
  row.Set("datetime_end", r.end_time);
  row.Set("duration", r.state == TrialState::kRunning ? kNaN : r.duration());
  SetPlaceColumns(r, &row);
  row.Set("attempt", std::int64_t{r.attempt});
  row.Set("retry_of", r.retry_of);
  row.Set("enqueued", std::int64_t{r.enqueued ? 1 : 0});
  row.Set("sampler_ms", r.sampler_ms);
  row.Set("last_step", r.last_step);
  row.Set("gpu_mem_before_mb", r.gpu_mem_before_mb);
  row.Set("gpu_mem_peak_mb", r.gpu_mem_peak_mb);
  row.Set("gpu_mem_after_mb", r.gpu_mem_after_mb);
  row.Set("gpu_mem_foreign_mb", r.gpu_mem_foreign_mb);
  for (const auto& [column, field] : {std::pair{"datetime_worker_free", r.worker_free_time},
                                      std::pair{"cpu_seconds", r.cpu_seconds}, std::pair{"gpu_seconds", r.gpu_seconds},
                                      std::pair{"energy_j", r.energy_j}, std::pair{"violation", r.violation}}) {
    if (impl_->trials_layout.Find(column)) row.Set(column, field);
  }
  if (impl_->trials_layout.Find("checkpoint_step")) row.Set("checkpoint_step", r.checkpoint_step);
  if (impl_->trials_layout.Find("resumed_from")) row.Set("resumed_from", r.resumed_from);
  if (impl_->trials_layout.Find("parent")) row.Set("parent", r.parent);
  if (impl_->trials_layout.Find("generation")) row.Set("generation", r.generation);
  if (impl_->trials_layout.Find("gpus")) {
    row.Set("gpus", std::int64_t{r.gpus});
    row.Set("workers", r.workers);
    row.Set("peak_rss_max_kb", r.peak_rss_max_kb);
    row.Set("gpu_mem_peak_max_mb", r.gpu_mem_peak_max_mb);
  }
  if (impl_->trials_layout.Find(kTextChecksumColumn)) {
    row.Set(kTextChecksumColumn, std::int64_t{TextChecksum(r.reason, r.output_tail, r.attrs_json)});
  }
  row.Set("reason", r.reason);
  row.Set("output_tail", r.output_tail);
  row.Set("attrs", r.attrs_json);
  const auto known = impl_->row_of.find(r.number);
  const hsize_t index = known != impl_->row_of.end() ? known->second : impl_->trial_rows;
  CS_RETURN_IF_ERROR(impl_->WriteRow(&impl_->pending_trials, std::move(row), index, &impl_->trial_rows));
  impl_->row_of[r.number] = index;
  return Status::Ok();
}

Status StudyFile::AppendIntermediate(const IntermediateValue& v) {
  RowBuffer row(impl_->intermediate_layout);
  row.Set("trial", v.trial);
  row.Set("step", v.step);
  row.Set("value", v.value);
  row.Set("time", v.time);
  if (const std::vector<std::string> reported = impl_->study.ReportedMetrics(); reported.size() > 1) {
    for (size_t i = 0; i < reported.size(); ++i)
      row.Set(MetricColumn(reported[i]), i < v.values.size() ? v.values[i] : kNaN);
  }
  return impl_->WriteRow(&impl_->pending_intermediate, std::move(row), impl_->intermediate_rows,
                         &impl_->intermediate_rows);
}

Status StudyFile::AppendAttempt(const TrialRecord& r) {
  RowBuffer row(impl_->attempts_layout);
  row.Set("trial", r.number);
  row.Set("attempt", std::int64_t{r.attempt});
  row.Set("state", std::string(TrialStateName(r.state)));
  row.Set("resumed_from", r.resumed_from);
  row.Set("checkpoint_step", r.checkpoint_step);
  row.Set("last_step", r.last_step);
  row.Set("datetime_start", r.start_time);
  row.Set("datetime_end", r.end_time);
  SetPlaceColumns(r, &row);
  row.Set("cpu_seconds", r.cpu_seconds);
  row.Set("gpu_seconds", r.gpu_seconds);
  row.Set("energy_j", r.energy_j);
  row.Set("reason", r.reason);
  return impl_->WriteRow(&impl_->pending_attempts, std::move(row), impl_->attempt_rows, &impl_->attempt_rows);
}

Status StudyFile::AppendTrialParam(const TrialParamRow& p) {
  RowBuffer row(impl_->params_layout);
  row.Set("trial", p.trial);
  row.Set("name", p.name);
  row.Set("value", AsNumber(p.value));
  row.Set("value_json", ToJson(p.value).dump());
  row.Set("distribution", p.distribution);
  return impl_->WriteRow(&impl_->pending_params, std::move(row), impl_->param_rows, &impl_->param_rows);
}

}  // namespace cleansweep
