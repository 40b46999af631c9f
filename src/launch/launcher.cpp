#include "launch/launcher.hpp"

#include <csignal>
#include <cstring>

#include "util/byte_size.hpp"

namespace cleansweep {
namespace {

bool ShowsCudaOom(const std::string& output) {
  return output.find("CUDA out of memory") != std::string::npos ||
         output.find("CUDA error: out of memory") != std::string::npos ||
         output.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos;
}

// What a program prints when an allocation fails: C++, Python, glibc, libtorch's CPU allocator.
bool ShowsHostOom(const std::string& output) {
  for (const char* text : {"std::bad_alloc", "MemoryError", "Cannot allocate memory",
                           "DefaultCPUAllocator: can't allocate", "DefaultCPUAllocator: not enough memory"}) {
    if (output.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

void ClassifyOutcome(const ProtocolParser& reports, std::optional<TrialState> stop_state,
                     const std::string& stop_reason, const MemoryCap& memory, TrialOutcome* o, bool value_required) {
  const std::int64_t limit = memory.limit_bytes;
  const bool at_limit = limit > 0 && (memory.oom_kills > 0 || ShowsHostOom(o->output_tail) ||
                                      (o->peak_rss_kb - memory.inherited_kb) * 1024 >= limit * 9 / 10);
  const std::string limit_text =
      limit > 0 ? " (trial.memory_limit " + FormatByteSize(limit) + ", as " + memory.how + ")" : "";
  o->value = reports.final_value();
  o->values = reports.final_values();
  o->attrs_json = reports.attrs().dump();
  o->last_step = reports.last_step();
  o->checkpoint_step = reports.last_checkpoint();
  // Told to stop by a pruner but done first (exit 0 with its final value): it completed.
  const bool finished_first = stop_state == TrialState::kPruned && o->signal == 0 && o->exit_code == 0 &&
                              (o->value || !o->values.empty()) && !reports.error() && !reports.oom();
  if (stop_state && !finished_first) {
    o->state = *stop_state;
    o->reason = stop_reason;
    if (*stop_state == TrialState::kPruned) {  // what it was pruned on: the first metric's last report
      o->value = reports.last_value();
      o->values.clear();
    }
  } else if (reports.oom()) {
    o->state = *reports.oom() == "gpu" ? TrialState::kOomGpu : TrialState::kOomHost;
    o->reason = "out of " + std::string(*reports.oom() == "gpu" ? "GPU" : "host") + " memory" +
                (reports.oom_message().empty() ? "" : ": " + reports.oom_message());
  } else if (reports.error()) {
    o->state = TrialState::kFail;
    o->reason = "protocol error: " + *reports.error();
  } else if (reports.pruned() && o->signal == 0 && o->exit_code == 0 && !o->value && o->values.empty()) {
    // It pruned itself (raise TrialPruned, as an Optuna objective does): pruned on its last report.
    o->state = TrialState::kPruned;
    o->value = reports.last_value();
    o->reason = "pruned by the trial itself" + (reports.pruned()->empty() ? "" : ": " + *reports.pruned());
  } else if (o->signal != 0 || o->exit_code != 0) {
    o->reason = o->signal != 0
                    ? std::string("killed by signal ") + std::to_string(o->signal) + " (" + strsignal(o->signal) + ")"
                    : "exited with status " + std::to_string(o->exit_code);
    if (ShowsCudaOom(o->output_tail)) {
      o->state = TrialState::kOomGpu;
      o->reason = "CUDA out of memory (from its output); " + o->reason;
    } else if (at_limit) {
      o->state = TrialState::kOomHost;
      o->reason =
          (memory.oom_kills > 0 ? "killed by the kernel's OOM killer at its memory limit" : "over its memory limit") +
          limit_text + "; " + o->reason;
    } else if (o->signal == SIGKILL) {
      // We did not send it (that would be a stop state). On Linux an unexplained SIGKILL is
      // almost always the kernel's OOM killer; dmesg on that host says for sure.
      o->state = TrialState::kOomHost;
      o->reason =
          "killed by SIGKILL that cleansweep did not send: most likely the kernel's OOM killer (see dmesg "
          "on its host)";
    } else {
      o->state = o->signal != 0 ? TrialState::kCrash : TrialState::kFail;
      if (ShowsHostOom(o->output_tail)) {
        o->state = TrialState::kOomHost;
        o->reason = "host memory allocation failed (from its output); " + o->reason;
      }
    }
  } else if (!o->value && value_required) {
    o->state = TrialState::kFail;
    o->reason = "exited 0 without reporting a final value";
  } else {
    o->state = TrialState::kComplete;
    o->reason.clear();
  }
}

}  // namespace cleansweep
