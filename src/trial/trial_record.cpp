#include "trial/trial_record.hpp"

namespace cleansweep {
namespace {

constexpr const char* kNames[] = {"RUNNING", "COMPLETE", "PRUNED",  "FAIL",       "CRASH",
                                  "OOM_GPU", "OOM_HOST", "TIMEOUT", "INTERRUPTED"};

}  // namespace

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

}  // namespace cleansweep
