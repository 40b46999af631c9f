// cleansweep-train-fashion: trains the Fashion-MNIST CNN once. Inside a sweep its parameters come
// from CLEANSWEEP_PARAMS and its results go back through the report pipe; alone, it takes flags
// and prints. Exit status: 0 done, 2 bad options, 3 data missing, 75 out of memory, 1 other error.
#include <cstdio>
#include <new>
#include <string>

#include <torch/torch.h>

#include "fashion/training.hpp"

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

}  // namespace

int main(int argc, char** argv) {
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
  std::printf("training on %s: %lld examples, validating on %lld\n", cuda ? "cuda" : "cpu",
              static_cast<long long>(data.train.images.size(0)),
              static_cast<long long>(data.validation.images.size(0)));
  try {
    const fashion::TrainResult result = fashion::Train(options, data, device, trial);
    if (result.pruned) return 0;  // recorded PRUNED with its last reported accuracy
    trial.SetAttr("n_params", static_cast<double>(result.parameters));
    trial.SetAttr("train_seconds", result.seconds);
    trial.SetAttr("device", cuda ? "cuda" : "cpu");
    trial.Finish(result.val_accuracy);
    std::printf("validation accuracy %.4f (%lld parameters, %.1fs)\n", result.val_accuracy,
                static_cast<long long>(result.parameters), result.seconds);
    return 0;
  } catch (const std::bad_alloc&) {
    return OutOfMemory(trial, "host", "std::bad_alloc");
  } catch (const std::exception& e) {
    if (IsOutOfMemory(e.what())) return OutOfMemory(trial, cuda ? "gpu" : "host", e.what());
    std::fprintf(stderr, "cleansweep-train-fashion: training failed: %s\n", e.what());
    return kExitError;
  }
}
