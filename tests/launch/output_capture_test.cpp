#include "launch/output_capture.hpp"

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
  Result<OutputCapture> capture = OutputCapture::Open("/dev/full", 1000, 1);
  ASSERT_TRUE(capture.ok());
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

}  // namespace
}  // namespace cleansweep
