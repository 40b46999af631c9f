// The NVML probe: the handful of NVML entry points we use, looked up with dlsym. The types mirror
// nvml.h (a C ABI that NVIDIA keeps stable), so no NVIDIA header is needed to build.
#include <dlfcn.h>

#include <cstdlib>
#include <limits>

#include "gpu/gpu_probe.hpp"

namespace cleansweep {
namespace {

using NvmlReturn = int;    // nvmlReturn_t
using NvmlDevice = void*;  // nvmlDevice_t
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
constexpr unsigned long long kNotAvailable = std::numeric_limits<unsigned long long>::max();
constexpr double kMiB = 1024.0 * 1024.0;

struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct NvmlProcessV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
struct NvmlProcessV2 {  // nvmlProcessInfo_t of the _v2 and _v3 calls
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};

class NvmlProbe : public GpuProbe {
 public:
  ~NvmlProbe() override {
    if (shutdown_) shutdown_();
    if (library_) ::dlclose(library_);
  }

  static std::unique_ptr<NvmlProbe> Open(std::string* why) {
    const char* override_path = std::getenv("CLEANSWEEP_NVML_LIBRARY");
    const std::string path = override_path && *override_path ? override_path : "libnvidia-ml.so.1";
    void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      *why = "no NVML (" + path + " not loadable: no NVIDIA driver here)";
      return nullptr;
    }
    auto probe = std::unique_ptr<NvmlProbe>(new NvmlProbe(library));
    const auto init = probe->Symbol<NvmlReturn (*)()>("nvmlInit_v2");
    probe->shutdown_ = probe->Symbol<NvmlReturn (*)()>("nvmlShutdown");
    probe->by_index_ = probe->Symbol<NvmlReturn (*)(unsigned int, NvmlDevice*)>("nvmlDeviceGetHandleByIndex_v2");
    probe->by_uuid_ = probe->Symbol<NvmlReturn (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByUUID");
    probe->memory_ = probe->Symbol<NvmlReturn (*)(NvmlDevice, NvmlMemory*)>("nvmlDeviceGetMemoryInfo");
    probe->energy_ =
        probe->Symbol<NvmlReturn (*)(NvmlDevice, unsigned long long*)>("nvmlDeviceGetTotalEnergyConsumption");
    using ProcessCall = NvmlReturn (*)(NvmlDevice, unsigned int*, void*);
    probe->processes_ = probe->Symbol<ProcessCall>("nvmlDeviceGetComputeRunningProcesses_v3");
    if (!probe->processes_) probe->processes_ = probe->Symbol<ProcessCall>("nvmlDeviceGetComputeRunningProcesses_v2");
    if (!probe->processes_) {
      probe->processes_ = probe->Symbol<ProcessCall>("nvmlDeviceGetComputeRunningProcesses");
      probe->process_v1_ = true;
    }
    if (!init || !probe->by_index_ || !probe->memory_) {
      *why = "NVML in " + path + " lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetMemoryInfo";
      probe->shutdown_ = nullptr;
      return nullptr;
    }
    if (const NvmlReturn r = init(); r != kNvmlSuccess) {
      *why = "nvmlInit_v2 failed with NVML error " + std::to_string(r);
      probe->shutdown_ = nullptr;
      return nullptr;
    }
    return probe;
  }

  std::optional<GpuMemory> DeviceMemory(const std::string& device) override {
    NvmlDevice handle = nullptr;
    NvmlMemory memory{};
    if (!Handle(device, &handle) || memory_(handle, &memory) != kNvmlSuccess) return std::nullopt;
    return GpuMemory{static_cast<double>(memory.used) / kMiB, static_cast<double>(memory.total) / kMiB};
  }

  std::optional<std::vector<GpuProcess>> Processes(const std::string& device) override {
    NvmlDevice handle = nullptr;
    if (!processes_ || !Handle(device, &handle)) return std::nullopt;
    for (unsigned int capacity = 16; capacity <= 4096; capacity *= 4) {
      unsigned int count = capacity;
      std::vector<NvmlProcessV2> v2(process_v1_ ? 0 : capacity);
      std::vector<NvmlProcessV1> v1(process_v1_ ? capacity : 0);
      void* buffer = process_v1_ ? static_cast<void*>(v1.data()) : static_cast<void*>(v2.data());
      const NvmlReturn r = processes_(handle, &count, buffer);
      if (r == kNvmlInsufficientSize) continue;
      if (r != kNvmlSuccess) return std::nullopt;
      std::vector<GpuProcess> out;
      for (unsigned int i = 0; i < count && i < capacity; ++i) {
        const unsigned int pid = process_v1_ ? v1[i].pid : v2[i].pid;
        const unsigned long long bytes = process_v1_ ? v1[i].used_gpu_memory : v2[i].used_gpu_memory;
        out.push_back({static_cast<int>(pid), bytes == kNotAvailable ? -1.0 : static_cast<double>(bytes) / kMiB});
      }
      return out;
    }
    return std::nullopt;
  }

  std::optional<double> EnergyJoules(const std::string& device) override {
    NvmlDevice handle = nullptr;
    unsigned long long millijoules = 0;
    if (!energy_ || !Handle(device, &handle) || energy_(handle, &millijoules) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(millijoules) * 1e-3;
  }

 private:
  explicit NvmlProbe(void* library) : library_(library) {}

  template <class F>
  F Symbol(const char* name) {
    return reinterpret_cast<F>(::dlsym(library_, name));
  }

  bool Handle(const std::string& device, NvmlDevice* handle) {
    if (device.rfind("GPU-", 0) == 0) return by_uuid_ && by_uuid_(device.c_str(), handle) == kNvmlSuccess;
    if (device.empty() || device.find_first_not_of("0123456789") != std::string::npos) return false;  // MIG-...
    return by_index_(static_cast<unsigned int>(std::atoi(device.c_str())), handle) == kNvmlSuccess;
  }

  void* library_;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*by_index_)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*by_uuid_)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*memory_)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*processes_)(NvmlDevice, unsigned int*, void*) = nullptr;
  NvmlReturn (*energy_)(NvmlDevice, unsigned long long*) = nullptr;  // optional: NVML before Volta lacks it
  bool process_v1_ = false;
};

}  // namespace

std::unique_ptr<GpuProbe> LoadNvml(std::string* why) { return NvmlProbe::Open(why); }

}  // namespace cleansweep
