#include "trial/trial_record.hpp"

namespace cleansweep {
namespace {

constexpr const char* kNames[] = {"RUNNING", "COMPLETE", "PRUNED",  "FAIL",        "CRASH",
                                  "OOM_GPU", "OOM_HOST", "TIMEOUT", "INTERRUPTED", "PAUSED"};

}  // namespace

bool IsFailure(TrialState s) {
  return s == TrialState::kFail || s == TrialState::kCrash || s == TrialState::kOomGpu || s == TrialState::kOomHost ||
         s == TrialState::kTimeout;
}

const char* TrialStateName(TrialState state) { return kNames[static_cast<int>(state)]; }

bool ParseTrialState(const std::string& name, TrialState* state) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i) {
    if (name == kNames[i]) {
      *state = static_cast<TrialState>(i);
      return true;
    }
  }
  return false;
}

std::set<std::int64_t> TrialsToContinue(const std::vector<TrialRecord>& trials) {
  std::set<std::int64_t> rerun;  // interrupted trials already run again under a new number
  for (const TrialRecord& r : trials) {
    if (r.retry_of >= 0) rerun.insert(r.retry_of);
  }
  std::set<std::int64_t> out;
  for (const TrialRecord& r : trials) {
    const bool cut_off = r.state == TrialState::kRunning || r.state == TrialState::kInterrupted;
    if ((cut_off && !rerun.count(r.number)) || r.state == TrialState::kPaused) out.insert(r.number);
  }
  return out;
}

}  // namespace cleansweep
