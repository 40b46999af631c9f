// A trial's checkpoints on disk (docs/checkpoints.md): CLEANSWEEP_CHECKPOINT_DIR is the folder
// `checkpoints` of its trial folder, and a checkpoint of step S is whatever the trial put there
// named `step-S` or `step-S.<anything>` (a file `step-12.pt`, a folder `step-12/`). Other names are
// the trial's own and are never touched.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace cleansweep {

inline constexpr const char* kCheckpointFolder = "checkpoints";

std::string CheckpointDir(const std::string& trial_dir);

// The step an entry of the checkpoint folder belongs to, from its name; none for other names.
std::optional<std::int64_t> CheckpointStepOf(const std::string& name);

inline constexpr std::int64_t kAllCheckpoints = std::numeric_limits<std::int64_t>::max();

// Removes the checkpoints of `checkpoint_dir` of steps before `before` (kAllCheckpoints: every one).
// Returns how many entries went; what cannot be removed stays (a warning's business,
// never the trial's outcome), described in `*error` when not null.
int RemoveCheckpointsBefore(const std::string& checkpoint_dir, std::int64_t before, std::string* error = nullptr);

// Gives the checkpoint folder `to_dir` the checkpoint of `step` from `from_dir` (population-based
// training: a trial that starts from another one's checkpoint). Each entry is hard-linked (a
// folder: its files, recursively), or copied where links cannot be made (another file system).
// Nothing is done when `to_dir` has a checkpoint of `step` already (a trial that goes on again).
// An error names what is missing or could not be made.
std::optional<std::string> ShareCheckpoint(const std::string& from_dir, const std::string& to_dir, std::int64_t step);

}  // namespace cleansweep
