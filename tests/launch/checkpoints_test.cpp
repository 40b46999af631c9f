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

// A checkpoint is the parent trial's to make, so it may hold links to anywhere: they are shared
// as links (as `cp -R` does), never followed. Following one made the worker copy what it names:
// the whole file system for a link to /, without end for a link to its own folder.
TEST(Checkpoints, LinksInACheckpointAreSharedAsLinksNeverFollowed) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("cs-share-links-" + std::to_string(::getpid()));
  const fs::path parent = root / "3/checkpoints", child = root / "9/checkpoints", outside = root / "outside";
  fs::create_directories(parent / "step-4");
  fs::create_directories(outside / "deep");
  std::ofstream(outside / "deep/data.bin") << "not the checkpoint's";
  std::ofstream(parent / "step-4/weights.pt") << "w";
  fs::create_directory_symlink(outside, parent / "step-4/dataset");  // absolute, out of the trial
  fs::create_directory_symlink(".", parent / "step-4/loop");         // to its own folder
  fs::create_symlink("weights.pt", parent / "step-4/latest.pt");     // relative, inside the step
  fs::create_directory_symlink(outside, parent / "step-5");          // the step itself a link
  ASSERT_EQ(::mkfifo((parent / "step-6.fifo").c_str(), 0600), 0);    // nobody writes it

  std::optional<std::string> error4 = ShareCheckpoint(parent.string(), child.string(), 4);
  ASSERT_FALSE(error4) << *error4;
  EXPECT_TRUE(fs::is_symlink(child / "step-4/dataset"));
  EXPECT_EQ(fs::read_symlink(child / "step-4/dataset"), outside);
  EXPECT_TRUE(fs::is_symlink(child / "step-4/loop"));
  EXPECT_TRUE(fs::is_symlink(child / "step-4/latest.pt"));
  std::string text;
  std::ifstream(child / "step-4/latest.pt") >> text;
  EXPECT_EQ(text, "w");
  std::optional<std::string> error5 = ShareCheckpoint(parent.string(), child.string(), 5);
  ASSERT_FALSE(error5) << *error5;
  EXPECT_TRUE(fs::is_symlink(child / "step-5"));
  EXPECT_EQ(fs::read_symlink(child / "step-5"), outside);
  // A named pipe is linked, not opened: opening one nobody writes would wait for ever.
  std::optional<std::string> error6 = ShareCheckpoint(parent.string(), child.string(), 6);
  ASSERT_FALSE(error6) << *error6;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(child / "step-6.fifo")));
  // Nothing outside was copied in: the only regular files are the one weights file, linked twice.
  int files = 0;
  for (auto it = fs::recursive_directory_iterator(child); it != fs::recursive_directory_iterator(); ++it) {
    files += it->is_regular_file() && !it->is_symlink() ? 1 : 0;
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(root);
  EXPECT_FALSE(fs::exists(root));
}

// Across file systems nothing can be hard-linked: files are copied, links still shared as links
// (the old fallback, a plain recursive copy, copied whatever a link named), a pipe is refused.
TEST(Checkpoints, AcrossFileSystemsFilesAreCopiedAndLinksStayLinks) {
  namespace fs = std::filesystem;
  struct stat shm {
  }, tmp{};
  if (::stat("/dev/shm", &shm) != 0 || ::stat(fs::temp_directory_path().c_str(), &tmp) != 0 ||
      shm.st_dev == tmp.st_dev) {
    GTEST_SKIP() << "needs /dev/shm on a file system of its own, apart from " << fs::temp_directory_path();
  }
  const std::string name = "cs-share-fs-" + std::to_string(::getpid());
  const fs::path parent = fs::path("/dev/shm") / name, root = fs::temp_directory_path() / name,
                 child = root / "9/checkpoints", outside = root / "outside";
  fs::create_directories(parent / "step-4/sub");
  fs::create_directories(outside);
  std::ofstream(outside / "data.bin") << "not the checkpoint's";
  std::ofstream(parent / "step-4/sub/weights.pt") << "w";
  fs::create_directory_symlink(outside, parent / "step-4/dataset");
  ASSERT_EQ(::mkfifo((parent / "step-5.fifo").c_str(), 0600), 0);

  const std::optional<std::string> error = ShareCheckpoint(parent.string(), child.string(), 4);
  ASSERT_FALSE(error) << *error;
  std::string text;
  std::ifstream(child / "step-4/sub/weights.pt") >> text;
  EXPECT_EQ(text, "w");
  EXPECT_TRUE(fs::is_symlink(child / "step-4/dataset"));
  EXPECT_EQ(fs::read_symlink(child / "step-4/dataset"), outside);
  const std::optional<std::string> pipe = ShareCheckpoint(parent.string(), child.string(), 5);
  ASSERT_TRUE(pipe);
  EXPECT_NE(pipe->find("cannot link or copy the checkpoint"), std::string::npos) << *pipe;
  EXPECT_FALSE(fs::exists(child / "step-5.fifo"));
  for (const auto& entry : fs::directory_iterator(child)) {
    EXPECT_EQ(entry.path().filename().string().find(".part-"), std::string::npos) << entry.path();
  }
  fs::remove_all(parent);
  fs::remove_all(root);
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
