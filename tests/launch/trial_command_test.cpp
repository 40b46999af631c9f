#include "launch/trial_command.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

TEST(ExpandCommand, FillsPlaceholdersAndDropsInactiveWords) {
  const ParamSet params = {{"lr", 0.001}, {"opt", std::string("adam")}, {"n", std::int64_t{4}}};
  const auto argv = ExpandCommand({"prog", "--lr={lr}", "--opt", "{opt}", "--momentum={momentum}", "{{x}}-{n}",
                                   "--out={trial_dir}/model.pt", "#{trial}"},
                                  params, 17, "/r/17");
  EXPECT_EQ(argv,
            (std::vector<std::string>{"prog", "--lr=0.001", "--opt", "adam", "{x}-4", "--out=/r/17/model.pt", "#17"}));
}

// Issue 15: an unclosed '{' made ExpandCommand loop forever (only validation kept it away).
TEST(ExpandCommand, AnUnclosedBraceIsTextNotAnEndlessLoop) {
  const std::vector<std::string> argv = ExpandCommand({"prog", "--x={x", "{"}, {{"x", 0.5}}, 3, "/t");
  EXPECT_EQ(argv, (std::vector<std::string>{"prog", "--x={x", "{"}));
}

TEST(ResolveProgram, FindsPathsBareNamesAndExplainsMisses) {
  const Result<std::string> sh = ResolveProgram("sh");  // from PATH
  ASSERT_TRUE(sh.ok());
  EXPECT_EQ(sh->substr(sh->size() - 3), "/sh");
  EXPECT_EQ(*ResolveProgram(TOY_TRIAL), TOY_TRIAL);
  const Result<std::string> missing = ResolveProgram("no-such-program-here");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidInput);
  EXPECT_NE(missing.status().message().find("program 'no-such-program-here' not found next to cleansweep"),
            std::string::npos);
  const testing::TempDir dir;
  const Result<std::string> not_exec = ResolveProgram(dir.Write("script.py", "print(1)\n"));
  ASSERT_FALSE(not_exec.ok());
  EXPECT_NE(not_exec.status().message().find("is not an executable file"), std::string::npos);
  EXPECT_NE(ResolveProgram("./nope/x").status().message().find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace cleansweep
