// TrainerMain: trains the Fashion-MNIST CNN once. It is the main() of cleansweep-train-fashion
// (main.cpp) and the entry point of its fork-server plugin cleansweep-train-fashion.so
// (plugin.cpp). Inside a sweep its parameters come from CLEANSWEEP_PARAMS and its results go back
// through the report pipe; alone, it takes flags and prints. Exit status: 0 done, 2 bad options, 3 data missing, 75 out
// of memory, 1 other error.
//
// `--loop-params FILE [flags]` is the contrast that scripts/gpu/check.sh and
// bench/run_seed_problem_bench.sh run: it trains every configuration in FILE (one JSON object of
// parameters per line) one after another in this one process, as a for-loop under Optuna would,
// and prints the GPU's used memory (NVML) and this process's host memory after each.
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "fashion/trainer_main.hpp"
#include "fashion/training.hpp"
#include "gpu/gpu_probe.hpp"

namespace {

using cleansweep::Trial;
namespace fashion = cleansweep::fashion;

constexpr int kExitError = 1;
constexpr int kExitNoData = 3;

bool IsOutOfMemory(const std::string& what) {
  return what.find("out of memory") != std::string::npos ||
         what.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos;
}

int OutOfMemory(Trial& trial, const char* kind, const std::string& what) {
  const std::string message = what.substr(0, what.find('\n'));
  std::fprintf(stderr, "cleansweep-train-fashion: out of %s memory: %s\n", kind, message.c_str());
  trial.ReportOutOfMemory(kind, message);
  return cleansweep::kExitOutOfMemory;
}

// This process's host memory: resident (RSS), and what glibc's allocator holds in its arenas
// without using it (freed, not given back to the system).
struct HostMemory {
  double rss_mb = 0;
  double malloc_free_mb = 0;
  double malloc_total_mb = 0;  // arenas and mmapped blocks
};

HostMemory ReadHostMemory() {
  HostMemory m;
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.rss_mb = static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
  const struct mallinfo2 info = ::mallinfo2();
  m.malloc_free_mb = static_cast<double>(info.fordblks) / (1 << 20);
  m.malloc_total_mb = static_cast<double>(info.arena + info.hblkhd) / (1 << 20);
  return m;
}

// Trains each configuration of `path` in this process; returns the exit status.
int TrainInALoop(const std::string& path, int argc, char** argv) {
  std::ifstream lines(path);
  if (!lines) {
    std::fprintf(stderr, "cleansweep-train-fashion: --loop-params %s: cannot read it\n", path.c_str());
    return 2;
  }
  std::string why;
  const std::unique_ptr<cleansweep::GpuProbe> nvml = cleansweep::LoadNvml(&why);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string device_name =
      visible && *visible ? std::string(visible).substr(0, std::string(visible).find(',')) : "0";
  if (!nvml) std::fprintf(stderr, "cleansweep-train-fashion: %s; GPU memory is not shown\n", why.c_str());
  int index = 0;
  for (std::string params; std::getline(lines, params); ++index) {
    if (params.empty()) continue;
    ::setenv("CLEANSWEEP_PARAMS", params.c_str(), 1);
    Trial trial = Trial::FromEnvironment();
    fashion::TrainOptions options;
    int exit_code = 0;
    if (!fashion::ParseOptions(argc, argv, trial, &options, &exit_code)) return exit_code;
    const bool cuda = options.device != "cpu" && torch::cuda::is_available();
    try {
      const fashion::Dataset data = fashion::Load(options.data_dir, options.subset, options.val_size);
      const fashion::TrainResult result =
          fashion::Train(options, data, cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU), trial);
      const std::optional<cleansweep::GpuMemory> memory = nvml ? nvml->DeviceMemory(device_name) : std::nullopt;
      const HostMemory host = ReadHostMemory();
      std::printf(
          "loop model %d: val_accuracy %.4f, GPU %s used %s MiB, host RSS %.1f MiB, malloc holds %.1f MiB free of "
          "%.1f MiB\n",
          index, result.val_accuracy, device_name.c_str(),
          memory ? std::to_string(std::lround(memory->used_mb)).c_str() : "?", host.rss_mb, host.malloc_free_mb,
          host.malloc_total_mb);
    } catch (const std::exception& e) {
      std::printf("loop model %d: failed: %s\n", index, std::string(e.what()).substr(0, 200).c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int cleansweep::fashion::TrainerMain(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--loop-params") {
    const std::string path = argv[2];
    argv[2] = argv[0];  // argv + 2 is now {program, flags after FILE...} for the usual parser
    return TrainInALoop(path, argc - 2, argv + 2);
  }
  Trial trial;
  try {
    trial = Trial::FromEnvironment();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cleansweep-train-fashion: %s\n", e.what());
    return 2;
  }
  fashion::TrainOptions options;
  int exit_code = 0;
  if (!fashion::ParseOptions(argc, argv, trial, &options, &exit_code)) return exit_code;
  if (options.threads > 0) torch::set_num_threads(options.threads);
  if (options.startup_only) {  // the cost of starting a trial and no more: libtorch loaded and used once
    const torch::Tensor one = torch::zeros({1});
    trial.Report(0, one.item<double>());
    trial.Finish(one.item<double>());
    return 0;
  }

  fashion::Dataset data;
  try {
    data = fashion::Load(options.data_dir, options.subset, options.val_size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cleansweep-train-fashion: %s\n", e.what());
    return kExitNoData;
  }
  const bool cuda = options.device == "cuda" || (options.device == "auto" && torch::cuda::is_available());
  if (options.device == "cuda" && !torch::cuda::is_available()) {
    std::fprintf(stderr, "cleansweep-train-fashion: --device cuda, but this libtorch sees no CUDA device\n");
    return 2;
  }
  const torch::Device device = cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  std::printf("training on %s: %lld examples, validating on %lld (%s)\n", cuda ? "cuda" : "cpu",
              static_cast<long long>(data.train.images.size(0)), static_cast<long long>(data.validation.images.size(0)),
              data.preloaded ? "data preloaded by the fork server" : ("read from " + options.data_dir).c_str());
  try {
    const fashion::TrainResult result = fashion::Train(options, data, device, trial);
    if (result.pruned) return 0;  // recorded PRUNED with its last reported accuracy
    trial.SetAttr("n_params", static_cast<double>(result.parameters));
    trial.SetAttr("train_seconds", result.seconds);
    trial.SetAttr("device", cuda ? "cuda" : "cpu");
    if (options.report_latency) {
      trial.Finish({{"val_accuracy", result.val_accuracy}, {"latency_ms", result.latency_ms}});
    } else {
      trial.Finish(result.val_accuracy);
    }
    std::printf("validation accuracy %.4f (%lld parameters, %.1fs)", result.val_accuracy,
                static_cast<long long>(result.parameters), result.seconds);
    if (options.report_latency) std::printf(", inference %.3f ms per image", result.latency_ms);
    std::printf("\n");
    return 0;
  } catch (const std::bad_alloc&) {
    return OutOfMemory(trial, "host", "std::bad_alloc");
  } catch (const std::exception& e) {
    if (IsOutOfMemory(e.what())) return OutOfMemory(trial, cuda ? "gpu" : "host", e.what());
    std::fprintf(stderr, "cleansweep-train-fashion: training failed: %s\n", e.what());
    return kExitError;
  }
}
