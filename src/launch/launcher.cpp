#include "launch/launcher.hpp"

#include <cstring>

namespace cleansweep {
namespace {

bool ShowsCudaOom(const std::string& output) {
  return output.find("CUDA out of memory") != std::string::npos ||
         output.find("CUDA error: out of memory") != std::string::npos ||
         output.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos;
}

}  // namespace

void ClassifyOutcome(const ReportParser& reports, std::optional<TrialState> stop_state, const std::string& stop_reason,
                     TrialOutcome* o) {
  o->value = reports.final_value();
  o->attrs_json = reports.attrs().dump();
  o->last_step = reports.last_step();
  if (stop_state) {
    o->state = *stop_state;
    o->reason = stop_reason;
    if (*stop_state == TrialState::kPruned) o->value = reports.last_value();  // what it was pruned on
  } else if (reports.oom()) {
    o->state = *reports.oom() == "gpu" ? TrialState::kOomGpu : TrialState::kOomHost;
    o->reason = "out of " + std::string(*reports.oom() == "gpu" ? "GPU" : "host") + " memory" +
                (reports.oom_message().empty() ? "" : ": " + reports.oom_message());
  } else if (reports.error()) {
    o->state = TrialState::kFail;
    o->reason = "protocol error: " + *reports.error();
  } else if (o->signal != 0) {
    o->state = ShowsCudaOom(o->output_tail) ? TrialState::kOomGpu : TrialState::kCrash;
    o->reason = std::string("killed by signal ") + std::to_string(o->signal) + " (" + strsignal(o->signal) + ")";
  } else if (o->exit_code != 0) {
    o->state = ShowsCudaOom(o->output_tail) ? TrialState::kOomGpu : TrialState::kFail;
    o->reason = "exited with status " + std::to_string(o->exit_code);
  } else if (!o->value) {
    o->state = TrialState::kFail;
    o->reason = "exited 0 without reporting a final value";
  } else {
    o->state = TrialState::kComplete;
    o->reason.clear();
  }
}

}  // namespace cleansweep
