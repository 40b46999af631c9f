// The NVML probe against tests/gpu/fake_nvml.c (a library with NVML's entry points, driven by a
// state file), and without any NVML at all.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "gpu/gpu_probe.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("CLEANSWEEP_NVML_LIBRARY", FAKE_NVML, 1);
    ::setenv("FAKE_NVML_STATE", dir_.File("state").c_str(), 1);
    std::ofstream(dir_.File("state")) << "device 0 GPU-1111 81559 100\ndevice 1 GPU-2222 81559 50\n"
                                         "process 1 4242 1024\nprocess 1 4343 512\n";
    std::filesystem::create_directories(dir_.File("state.d"));
  }
  void TearDown() override {
    ::unsetenv("CLEANSWEEP_NVML_LIBRARY");
    ::unsetenv("FAKE_NVML_STATE");
    ::unsetenv("FAKE_NVML_FAIL_INIT");
  }
  testing::TempDir dir_;
};

TEST_F(FakeNvml, ReadsDeviceMemoryByIndexOrUuidAndItsProcesses) {
  std::string why;
  std::unique_ptr<GpuProbe> nvml = LoadNvml(&why);
  ASSERT_NE(nvml, nullptr) << why;
  const std::optional<GpuMemory> zero = nvml->DeviceMemory("0");
  ASSERT_TRUE(zero.has_value());
  EXPECT_NEAR(zero->used_mb, 100, 1e-6);
  EXPECT_NEAR(zero->total_mb, 81559, 1e-6);
  const std::optional<GpuMemory> one = nvml->DeviceMemory("GPU-2222");
  ASSERT_TRUE(one.has_value());
  EXPECT_NEAR(one->used_mb, 50 + 1024 + 512, 1e-6);
  const auto processes = nvml->Processes("1");
  ASSERT_TRUE(processes.has_value());
  ASSERT_EQ(processes->size(), 2u);
  EXPECT_EQ((*processes)[0].pid, 4242);
  EXPECT_NEAR((*processes)[0].used_mb, 1024, 1e-6);
  EXPECT_TRUE(nvml->Processes("0")->empty());
  // Unknown devices, and names NVML cannot look up, are unknown, not errors.
  EXPECT_FALSE(nvml->DeviceMemory("7").has_value());
  EXPECT_FALSE(nvml->DeviceMemory("GPU-9999").has_value());
  EXPECT_FALSE(nvml->DeviceMemory("MIG-1111/1/0").has_value());
  // It reads the state anew: a trial's file in state.d shows up at once.
  std::ofstream(dir_.File("state.d/77")) << "process 0 77 300\n";
  EXPECT_NEAR(nvml->DeviceMemory("0")->used_mb, 400, 1e-6);
  ASSERT_EQ(nvml->Processes("GPU-1111")->size(), 1u);
}

TEST_F(FakeNvml, ReadsTheEnergyCounterInJoulesWhereTheDeviceCountsEnergy) {
  std::string why;
  std::unique_ptr<GpuProbe> nvml = LoadNvml(&why);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_FALSE(nvml->EnergyJoules("0").has_value()) << "a device that counts no energy (NVML: not supported)";
  std::ofstream(dir_.File("state"), std::ios::app) << "energy 1 250000\n";
  std::ofstream(dir_.File("state.d/energy")) << "energy 0 1500\nenergy 1 1500\n";
  EXPECT_FALSE(nvml->EnergyJoules("0").has_value()) << "still: only the state file says a device counts";
  ASSERT_TRUE(nvml->EnergyJoules("GPU-2222").has_value());
  EXPECT_DOUBLE_EQ(*nvml->EnergyJoules("GPU-2222"), 251.5);
  EXPECT_DOUBLE_EQ(*nvml->EnergyJoules("1"), 251.5);
  EXPECT_FALSE(nvml->EnergyJoules("7").has_value());
  EXPECT_FALSE(nvml->EnergyJoules("MIG-1111/1/0").has_value());
}

TEST_F(FakeNvml, AFailedInitMeansNoProbeAndSaysWhy) {
  ::setenv("FAKE_NVML_FAIL_INIT", "1", 1);
  std::string why;
  EXPECT_EQ(LoadNvml(&why), nullptr);
  EXPECT_EQ(why, "nvmlInit_v2 failed with NVML error 999");
}

TEST(Nvml, WithoutTheLibraryThereIsNoProbeAndNoError) {
  ::setenv("CLEANSWEEP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  std::string why;
  EXPECT_EQ(LoadNvml(&why), nullptr);
  EXPECT_EQ(why, "no NVML (/nonexistent/libnvidia-ml.so.1 not loadable: no NVIDIA driver here)");
  ::unsetenv("CLEANSWEEP_NVML_LIBRARY");
}

}  // namespace
}  // namespace cleansweep
