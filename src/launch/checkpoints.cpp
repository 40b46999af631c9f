#include "launch/checkpoints.hpp"

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

}  // namespace cleansweep
