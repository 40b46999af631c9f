#include "launch/output_capture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::ReadFile;
using testing::TempDir;

TEST(OutputCapture, KeepsEverythingUnderTheLimit) {
  TempDir dir;
  Result<OutputCapture> capture = OutputCapture::Open(dir.File("log"), 1000, 2);
  ASSERT_TRUE(capture.ok());
  const std::string text = "one\ntwo\nthree\n";
  capture->Write(text.data(), text.size());
  capture->Close();
  EXPECT_EQ(ReadFile(dir.File("log")), text);
  EXPECT_EQ(capture->TailLines(), "two\nthree\n");
}

TEST(OutputCapture, AFailedWriteIsReportedAndTheTailIsStillKept) {
  // /dev/full: every write fails with ENOSPC, as on a full file system.
  UniqueFd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(full.valid());
  std::optional<OutputCapture> capture = OutputCapture::Writing(std::move(full), 1000, 1);
  EXPECT_EQ(capture->write_error(), "");
  const std::string text = "epoch 1\nepoch 2\n";
  capture->Write(text.data(), text.size());
  capture->Write(text.data(), text.size());  // no second attempt, no second message
  capture->Close();
  EXPECT_EQ(capture->write_error(), "log.txt is incomplete: writing it failed after 0 bytes (No space left on device)");
  EXPECT_EQ(capture->TailLines(), "epoch 2\n");  // the study file still gets the last lines
}

TEST(OutputCapture, CapsTheFileButKeepsHeadAndTail) {
  TempDir dir;
  Result<OutputCapture> capture = OutputCapture::Open(dir.File("log"), 100, 1);
  ASSERT_TRUE(capture.ok());
  for (int i = 0; i < 100000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    capture->Write(line.data(), line.size());
  }
  capture->Close();
  const std::string log = ReadFile(dir.File("log"));
  EXPECT_EQ(log.rfind("line 0\n", 0), 0u);
  EXPECT_NE(log.find("[cleansweep: log limit reached"), std::string::npos);
  EXPECT_NE(log.find("line 99999\n"), std::string::npos);
  EXPECT_LT(log.size(), 100u + 2 * OutputCapture::kTailBytes + 200);
  EXPECT_EQ(capture->TailLines(), "line 99999\n");
}

TEST(OutputCapture, CutsVeryLongLinesInTheTail) {
  TempDir dir;
  Result<OutputCapture> capture = OutputCapture::Open(dir.File("log"), 1 << 20, 3);
  const std::string text = std::string(2000, 'y') + "\nend";
  capture->Write(text.data(), text.size());
  EXPECT_EQ(capture->TailLines(), std::string(500, 'y') + "...\nend\n");
}

// The trial folder is the trial's too: what an earlier attempt left under the log's name is
// replaced, never written through or waited on. Opening a named pipe nobody reads for writing
// waits for ever; a link would have the log truncate and fill the file it names.
TEST(OutputCapture, TheLogReplacesWhatATrialLeftUnderItsName) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("log.txt").c_str(), 0600), 0);
  EXPECT_EXIT(
      {
        ::alarm(10);  // the old open would wait here: SIGALRM, a failed test instead of a hang
        Result<OutputCapture> capture = OutputCapture::Open(dir.File("log.txt"), 1000, 1);
        ::_exit(capture.ok() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  std::ofstream(dir.File("precious")) << "the user's";
  std::filesystem::remove(dir.File("log.txt"));
  std::filesystem::create_symlink(dir.File("precious"), dir.File("log.txt"));
  Result<OutputCapture> capture = OutputCapture::Open(dir.File("log.txt"), 1000, 1);
  ASSERT_TRUE(capture.ok()) << capture.status().message();
  capture->Write("epoch 1\n", 8);
  capture->Close();
  EXPECT_EQ(ReadFile(dir.File("precious")), "the user's");
  EXPECT_FALSE(std::filesystem::is_symlink(dir.File("log.txt")));
  EXPECT_EQ(ReadFile(dir.File("log.txt")), "epoch 1\n");
  // A folder there is not removed: the trial does not start, and says why.
  std::filesystem::remove(dir.File("log.txt"));
  std::filesystem::create_directories(dir.File("log.txt") + "/inside");
  capture = OutputCapture::Open(dir.File("log.txt"), 1000, 1);
  ASSERT_FALSE(capture.ok());
  EXPECT_NE(capture.status().message().find("log.txt: cannot remove what is there to create the trial log afresh"),
            std::string::npos)
      << capture.status().message();
}

}  // namespace
}  // namespace cleansweep
