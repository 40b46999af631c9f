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

}  // namespace

std::vector<std::string> DetectVisibleGpus(const std::string& proc_root) {
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) return SplitCommas(env);
  std::error_code ec;
  std::vector<std::string> gpus;
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root + "/driver/nvidia/gpus", ec)) {
    (void)entry;
    ++count;
  }
  for (size_t i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
  return gpus;
}

std::string AssignGpu(const std::string& option, const std::vector<std::string>& visible, int local_index) {
  if (option == "none") return "";
  const std::vector<std::string> pool = option == "auto" ? visible : SplitCommas(option);
  if (pool.empty()) return "";
  return pool[static_cast<size_t>(local_index) % pool.size()];
}

}  // namespace cleansweep
