#include "util/output_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cleansweep {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char folder[] = "/tmp/cleansweep-output-file-XXXXXX";
    ASSERT_NE(::mkdtemp(folder), nullptr);
    dir_ = folder;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, RenameNoReplaceMovesTheFileWhenNothingIsThere) {
  Write(Path("new"), "new study");
  ASSERT_TRUE(RenameNoReplace(Path("new"), Path("study.h5")).ok());
  EXPECT_EQ(Read(Path("study.h5")), "new study");
  EXPECT_FALSE(fs::exists(Path("new")));
}

TEST_F(OutputFileTest, RenameNoReplaceNeverReplacesAFileThatIsThere) {
  Write(Path("new"), "new study");
  Write(Path("study.h5"), "someone else's file");
  const Status moved = RenameNoReplace(Path("new"), Path("study.h5"));
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.code(), Status::Code::kInvalidInput);
  EXPECT_NE(moved.message().find(Path("study.h5") + ": a file already exists here"), std::string::npos)
      << moved.message();
  EXPECT_EQ(Read(Path("study.h5")), "someone else's file");  // untouched
  EXPECT_EQ(Read(Path("new")), "new study");                 // still there for the caller to remove
}

TEST_F(OutputFileTest, RenameNoReplaceSaysWhatFailedWhenTheSourceIsMissing) {
  const Status moved = RenameNoReplace(Path("missing"), Path("study.h5"));
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.code(), Status::Code::kIoError);
  EXPECT_NE(moved.message().find("cannot put the new file in place"), std::string::npos) << moved.message();
  EXPECT_FALSE(fs::exists(Path("study.h5")));
}

}  // namespace
}  // namespace cleansweep
