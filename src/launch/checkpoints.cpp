#include "launch/checkpoints.hpp"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <vector>

namespace cleansweep {

std::string CheckpointDir(const std::string& trial_dir) { return trial_dir + "/" + kCheckpointFolder; }

std::optional<std::int64_t> CheckpointStepOf(const std::string& name) {
  constexpr std::string_view kPrefix = "step-";
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  size_t end = kPrefix.size();
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == kPrefix.size() || end - kPrefix.size() > 18) return std::nullopt;  // no digits, or past int64
  if (end < name.size() && name[end] != '.') return std::nullopt;               // "step-3x": not ours
  return std::stoll(name.substr(kPrefix.size(), end - kPrefix.size()));
}

int RemoveCheckpointsBefore(const std::string& checkpoint_dir, std::int64_t before, std::string* error) {
  std::error_code ec;
  std::vector<std::filesystem::path> old;
  for (std::filesystem::directory_iterator it(checkpoint_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::optional<std::int64_t> step = CheckpointStepOf(it->path().filename().string());
    if (step && *step < before) old.push_back(it->path());
  }
  int removed = 0;
  for (const std::filesystem::path& path : old) {
    std::error_code remove_ec;
    std::filesystem::remove_all(path, remove_ec);
    if (!remove_ec) {
      ++removed;
    } else if (error && error->empty()) {
      *error = path.string() + ": cannot remove an old checkpoint: " + remove_ec.message();
    }
  }
  return removed;
}

namespace {

// One entry of a checkpoint, shared into `to`: a folder is made anew (its entries follow), anything
// else is hard-linked as it is (a link stays a link, a named pipe is never opened), or copied
// where it cannot be (another file system): a file's bytes, a link's target text. Links are never
// followed: the checkpoint is the parent trial's to make, and a link in it may name anything.
std::error_code ShareEntry(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(from, ec);
  if (ec) return ec;
  if (fs::is_directory(status)) {
    fs::create_directory(to, ec);
    return ec;
  }
  fs::create_hard_link(from, to, ec);
  if (!ec) return ec;
  ec.clear();
  if (fs::is_symlink(status)) {
    fs::copy_symlink(from, to, ec);
  } else if (fs::is_regular_file(status)) {
    fs::copy_file(from, to, ec);
  } else {
    ec = std::make_error_code(std::errc::not_supported);  // a pipe or device on another file system
  }
  return ec;
}

}  // namespace

std::optional<std::string> ShareCheckpoint(const std::string& from_dir, const std::string& to_dir, std::int64_t step) {
  namespace fs = std::filesystem;
  std::error_code ec;
  bool have = false;  // `to_dir` holds the step already
  for (fs::directory_iterator it(to_dir, ec), end; !ec && it != end; it.increment(ec)) {
    have = have || CheckpointStepOf(it->path().filename().string()) == step;
  }
  if (have) return std::nullopt;  // its own (a trial that goes on again), never mixed with the parent's
  std::vector<fs::path> entries;
  ec.clear();
  for (fs::directory_iterator it(from_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (CheckpointStepOf(it->path().filename().string()) == step) entries.push_back(it->path());
  }
  if (entries.empty()) {
    return from_dir + ": has no checkpoint of step " + std::to_string(step) + " to start from" +
           (ec ? " (" + ec.message() + ")" : std::string(" (removed already?)"));
  }
  fs::create_directories(to_dir, ec);
  if (ec) return to_dir + ": cannot create the checkpoint folder: " + ec.message();
  for (const fs::path& from : entries) {
    const fs::path to = fs::path(to_dir) / from.filename();
    if (fs::exists(to, ec)) continue;
    // Made under a name of its own, then renamed: the processes of a gang trial share one folder
    // and all link it at once; whichever renames first wins, the others find it there.
    static std::atomic<unsigned> made{0};
    const fs::path part = fs::path(to_dir) / (from.filename().string() + ".part-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(made.fetch_add(1)));
    ec = ShareEntry(from, part);
    if (!ec && fs::is_directory(fs::symlink_status(from, ec))) {
      for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
        ec = ShareEntry(it->path(), part / it->path().lexically_relative(from));  // relative() would follow links
      }
    }
    if (!ec) {
      fs::rename(part, to, ec);
      std::error_code there;
      if (ec && fs::exists(to, there)) ec.clear();  // another process of the trial was first
    }
    std::error_code cleanup;
    if (fs::exists(part, cleanup)) fs::remove_all(part, cleanup);
    if (ec) return to.string() + ": cannot link or copy the checkpoint " + from.string() + ": " + ec.message();
  }
  return std::nullopt;
}

}  // namespace cleansweep
