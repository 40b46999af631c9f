// GPU telemetry: how much memory a device uses, which processes hold it, and the energy it drew. The real
// probe is NVML, loaded at run time with dlopen (no build dependency: machines without an NVIDIA
// driver build, run and test the same binary, with the GPU fields of the study left empty).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cleansweep {

struct GpuMemory {
  double used_mb = 0;
  double total_mb = 0;
};

struct GpuProcess {
  int pid = 0;         // as NVML reports it: the host's pid namespace
  double used_mb = 0;  // negative when the driver does not say (some containers)
};

class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  // `device` as CUDA_VISIBLE_DEVICES names it: an index or a GPU-<uuid>. nullopt when unknown.
  virtual std::optional<GpuMemory> DeviceMemory(const std::string& device) = 0;
  // The compute processes that hold memory on `device`; nullopt when it cannot tell.
  virtual std::optional<std::vector<GpuProcess>> Processes(const std::string& device) = 0;
  // The device's energy counter, joules since the driver loaded; nullopt where it counts none (NVML
  // has it from Volta on) or cannot tell. Only differences mean anything.
  virtual std::optional<double> EnergyJoules(const std::string& /*device*/) { return std::nullopt; }
};

// NVML from libnvidia-ml.so.1 (or the library CLEANSWEEP_NVML_LIBRARY names: the tests' fake).
// nullptr, with `why` set, when there is no driver, no library or nvmlInit fails.
std::unique_ptr<GpuProbe> LoadNvml(std::string* why);

}  // namespace cleansweep
