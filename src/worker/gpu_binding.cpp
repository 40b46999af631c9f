#include "worker/gpu_binding.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace cleansweep {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string JoinCommas(const std::vector<std::string>& parts, size_t from = 0, size_t step = 1) {
  std::string out;
  for (size_t i = from; i < parts.size(); i += step) out += (out.empty() ? "" : ",") + parts[i];
  return out;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

int WorkerIndexOnNode(const EnvLookup& env, int mpi_index, int workers_on_node, bool coordinator_on_node) {
  const auto local_id = env("SLURM_LOCALID");
  if (!local_id || local_id->empty() || local_id->find_first_not_of("0123456789") != std::string::npos) {
    return mpi_index;
  }
  const int index = std::atoi(local_id->c_str()) - (coordinator_on_node ? 1 : 0);
  return index >= 0 && index < workers_on_node ? index : mpi_index;
}

VisibleGpus DetectVisibleGpus(const EnvLookup& env, const std::string& proc_root) {
  if (const auto cuda = env("CUDA_VISIBLE_DEVICES"); cuda && *cuda != "NoDevFiles") {
    return {SplitCommas(*cuda), "CUDA_VISIBLE_DEVICES=" + *cuda};
  }
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (const auto gpus = env(name); gpus && !gpus->empty()) return {SplitCommas(*gpus), name + ("=" + *gpus)};
  }
  if (const auto count = env("SLURM_GPUS_ON_NODE"); count && !count->empty()) {
    const int n = std::atoi(count->c_str());
    VisibleGpus visible{{}, "SLURM_GPUS_ON_NODE=" + *count};
    for (int i = 0; i < n; ++i) visible.devices.push_back(std::to_string(i));
    return visible;
  }
  std::error_code ec;
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root + "/driver/nvidia/gpus", ec)) {
    (void)entry;
    ++count;
  }
  VisibleGpus visible{{}, count > 0 ? "the NVIDIA driver" : "no GPU found"};
  for (size_t i = 0; i < count; ++i) visible.devices.push_back(std::to_string(i));
  return visible;
}

GpuAssignment AssignGpu(const std::string& option, const VisibleGpus& visible, int local_index, int local_count) {
  if (option == "none") return {};
  const std::vector<std::string> pool = option == "auto" ? visible.devices : SplitCommas(option);
  if (pool.empty()) return {};
  const auto n = pool.size();
  const auto workers = static_cast<size_t>(std::max(local_count, 1));
  GpuAssignment assignment{pool[static_cast<size_t>(local_index) % n], ""};
  // Only the node's first worker speaks for the node, and only when all its workers see the
  // same devices (a list of one is a per-task binding: each worker has its own).
  if (local_index != 0 || n == 1) return assignment;
  if (workers > n) {
    assignment.note = std::to_string(workers) + " workers share " + std::to_string(n) +
                      " GPUs: some GPUs run several trials at once (one worker per GPU avoids it)";
  } else if (workers < n) {
    assignment.note = std::to_string(n - workers) + " of " + std::to_string(n) + " GPUs stay idle (" +
                      JoinCommas(pool, workers) + "): start one worker per GPU";
  }
  return assignment;
}

}  // namespace cleansweep
