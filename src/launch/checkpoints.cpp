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
    const bool folder = fs::is_directory(from, ec);
    ec.clear();
    // Made under a name of its own, then renamed: the processes of a gang trial share one folder
    // and all link it at once; whichever renames first wins, the others find it there.
    static std::atomic<unsigned> made{0};
    const fs::path part = fs::path(to_dir) / (from.filename().string() + ".part-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(made.fetch_add(1)));
    if (folder) {
      fs::copy(from, part, fs::copy_options::recursive | fs::copy_options::create_hard_links, ec);
      if (ec) {
        std::error_code cleanup;
        fs::remove_all(part, cleanup);
        ec.clear();
        fs::copy(from, part, fs::copy_options::recursive, ec);
      }
    } else {
      fs::create_hard_link(from, part, ec);
      if (ec) {
        ec.clear();
        fs::copy_file(from, part, ec);
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
