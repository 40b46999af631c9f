#include "launch/checkpoints.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <thread>
#include <vector>

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

// Population-based training: a new trial starts from another's checkpoint, hard-linked into its own
// folder (files and folders), leaving the parent's intact and other steps out.
TEST(Checkpoints, AStepIsSharedByHardLinksAndOnlyWhenTheTrialLacksIt) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("cs-share-" + std::to_string(::getpid()));
  const std::filesystem::path parent = root / "3/checkpoints", child = root / "9/checkpoints";
  std::filesystem::create_directories(parent / "step-4");
  for (const char* name : {"step-2.json", "step-4.json", "step-4/weights.pt", "best.pt"}) {
    std::ofstream(parent / name) << name;
  }
  EXPECT_FALSE(ShareCheckpoint(parent.string(), child.string(), 4));
  EXPECT_TRUE(std::filesystem::exists(child / "step-4.json"));
  EXPECT_TRUE(std::filesystem::exists(child / "step-4/weights.pt"));
  EXPECT_FALSE(std::filesystem::exists(child / "step-2.json"));
  EXPECT_FALSE(std::filesystem::exists(child / "best.pt"));
  struct stat a {
  }, b{};
  ASSERT_EQ(::stat((parent / "step-4.json").c_str(), &a), 0);
  ASSERT_EQ(::stat((child / "step-4.json").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino) << "a hard link, not a copy";
  // The child's removal of its old steps leaves the parent's file.
  EXPECT_EQ(RemoveCheckpointsBefore(child.string(), 5), 2);
  EXPECT_TRUE(std::filesystem::exists(parent / "step-4.json"));
  // A child that has the step (it goes on again) keeps its own; a step nobody has is an error.
  std::ofstream(child / "step-6.json") << "mine";
  std::ofstream(parent / "step-6.json") << "theirs";
  EXPECT_FALSE(ShareCheckpoint(parent.string(), child.string(), 6));
  std::ifstream mine(child / "step-6.json");
  std::string text;
  mine >> text;
  EXPECT_EQ(text, "mine");
  const std::optional<std::string> error = ShareCheckpoint(parent.string(), child.string(), 8);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("has no checkpoint of step 8"), std::string::npos) << *error;
  std::filesystem::remove_all(root);
}

// A gang trial's processes all link the parent's checkpoint into their one folder at once: each
// call succeeds, whichever comes first, and leaves no part-made names behind.
TEST(Checkpoints, TheProcessesOfAGangShareOneStepAtOnce) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("cs-share-gang-" + std::to_string(::getpid()));
  const std::filesystem::path parent = root / "3/checkpoints", child = root / "9/checkpoints";
  std::filesystem::create_directories(parent / "step-4");
  for (int i = 0; i < 50; ++i) std::ofstream(parent / ("step-4/shard-" + std::to_string(i))) << i;
  std::ofstream(parent / "step-4.json") << "{}";
  std::vector<std::optional<std::string>> errors(8);
  std::vector<std::thread> ranks;
  for (auto& error : errors) ranks.emplace_back([&] { error = ShareCheckpoint(parent.string(), child.string(), 4); });
  for (auto& t : ranks) t.join();
  for (const auto& error : errors) EXPECT_FALSE(error) << *error;
  EXPECT_TRUE(std::filesystem::exists(child / "step-4/shard-49"));
  EXPECT_TRUE(std::filesystem::exists(child / "step-4.json"));
  for (const auto& entry : std::filesystem::directory_iterator(child)) {
    EXPECT_EQ(entry.path().filename().string().find(".part-"), std::string::npos) << entry.path();
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace cleansweep
