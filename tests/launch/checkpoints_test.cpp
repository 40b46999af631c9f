#include "launch/checkpoints.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

TEST(Checkpoints, NamesBelongToTheStepTheyStartWith) {
  EXPECT_EQ(CheckpointStepOf("step-12"), 12);
  EXPECT_EQ(CheckpointStepOf("step-12.pt"), 12);
  EXPECT_EQ(CheckpointStepOf("step-0.tar.gz"), 0);
  EXPECT_EQ(CheckpointStepOf("step-12.pt.tmp-4711"), 12);  // a write cut off: old once a later step is declared
  EXPECT_FALSE(CheckpointStepOf("step-"));
  EXPECT_FALSE(CheckpointStepOf("step-12x"));
  EXPECT_FALSE(CheckpointStepOf("step12.pt"));
  EXPECT_FALSE(CheckpointStepOf("best.pt"));                    // the trial's own: never touched
  EXPECT_FALSE(CheckpointStepOf("step-99999999999999999999"));  // past int64
}

TEST(Checkpoints, OlderStepsGoAndEverythingElseStays) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cs-ckpt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "step-2");
  std::filesystem::create_directories(dir / "step-3");
  for (const char* name : {"step-1.pt", "step-2/model.pt", "step-3/model.pt", "best.pt", "step-1.pt.tmp-9"}) {
    std::ofstream(dir / name) << "x";
  }
  EXPECT_EQ(RemoveCheckpointsBefore(dir.string(), 3), 3);  // step-1.pt, its stray temporary, step-2/
  EXPECT_TRUE(std::filesystem::exists(dir / "step-3/model.pt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "best.pt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "step-2"));
  EXPECT_EQ(RemoveCheckpointsBefore(dir.string(), kAllCheckpoints), 1);  // all of them
  EXPECT_TRUE(std::filesystem::exists(dir / "best.pt"));
  EXPECT_EQ(RemoveCheckpointsBefore((dir / "missing").string(), kAllCheckpoints), 0);  // no folder: nothing to do
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cleansweep
