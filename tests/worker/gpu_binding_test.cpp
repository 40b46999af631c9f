#include "worker/gpu_binding.hpp"

#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

TEST(AssignGpu, RoundRobinOverTheVisibleDevices) {
  const std::vector<std::string> visible = {"0", "1", "2", "3"};
  EXPECT_EQ(AssignGpu("auto", visible, 0), "0");
  EXPECT_EQ(AssignGpu("auto", visible, 3), "3");
  EXPECT_EQ(AssignGpu("auto", visible, 5), "1");  // more workers than GPUs share them
  EXPECT_EQ(AssignGpu("auto", {}, 2), "");        // no GPU: the CPU
  EXPECT_EQ(AssignGpu("none", visible, 0), "");
  EXPECT_EQ(AssignGpu("2,3", visible, 0), "2");  // an explicit list overrides detection
  EXPECT_EQ(AssignGpu("2,3", visible, 1), "3");
  EXPECT_EQ(AssignGpu("2,3", {}, 2), "2");
}

TEST(DetectVisibleGpus, HonoursCudaVisibleDevicesThenTheDriver) {
  testing::TempDir proc;
  std::filesystem::create_directories(proc.File("driver/nvidia/gpus/0000:01:00.0"));
  std::filesystem::create_directories(proc.File("driver/nvidia/gpus/0000:02:00.0"));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(DetectVisibleGpus(proc.path()), (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(DetectVisibleGpus(proc.File("nothing")).empty());
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-abc,GPU-def", 1);
  EXPECT_EQ(DetectVisibleGpus(proc.path()), (std::vector<std::string>{"GPU-abc", "GPU-def"}));
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // set but empty hides every GPU
  EXPECT_TRUE(DetectVisibleGpus(proc.path()).empty());
  ::unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
}  // namespace cleansweep
