// Which GPU a worker's trials get. Each worker gives its trials exactly one device through
// CUDA_VISIBLE_DEVICES, chosen round robin by the worker's index among the workers on its node.
#pragma once

#include <string>
#include <vector>

namespace cleansweep {

// The devices this process may use: the entries of CUDA_VISIBLE_DEVICES when it is set (empty
// means none), else one index per GPU the NVIDIA driver lists in /proc/driver/nvidia/gpus.
// `proc_root` is for tests.
std::vector<std::string> DetectVisibleGpus(const std::string& proc_root = "/proc");

// `option` is workers.gpus: "none" -> "" (CPU); "auto" -> visible[local_index % n], or "" when
// there are none; a comma list -> its entries round robin.
std::string AssignGpu(const std::string& option, const std::vector<std::string>& visible, int local_index);

}  // namespace cleansweep
