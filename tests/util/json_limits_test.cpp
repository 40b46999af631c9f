#include "util/json_limits.hpp"

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

std::string Nested(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1";
  for (int i = 0; i < depth; ++i) text += "}";
  return text;
}

TEST(CheckJsonDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_TRUE(CheckJsonDepth(Nested(kMaxJsonDepth)).ok());
  EXPECT_FALSE(CheckJsonDepth(Nested(kMaxJsonDepth + 1)).ok());
  EXPECT_TRUE(CheckJsonDepth("[[[]]]", 3).ok());
  EXPECT_FALSE(CheckJsonDepth("[[[[]]]]", 3).ok());
  // Brackets inside strings, escaped quotes included, are text.
  EXPECT_TRUE(CheckJsonDepth(R"({"a": "[[[[[[\"[[[[{{{{"})", 2).ok());
  EXPECT_TRUE(CheckJsonDepth(R"(["\\", [1]])", 2).ok());
}

// Issue 15: a report line nested ~100,000 deep (600 KB) crashed the worker with SIGSEGV.
TEST(ParseUntrustedJson, RefusesA100000DeepDocumentWithoutRecursing) {
  const Result<nlohmann::json> parsed = ParseUntrustedJson(Nested(100000));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nested deeper than 64"), std::string::npos);
}

TEST(ParseUntrustedJson, ParsesOrSaysWhy) {
  EXPECT_EQ((*ParseUntrustedJson(R"({"x": [1, 2]})"))["x"][1], 2);
  const Result<nlohmann::json> bad = ParseUntrustedJson("{\"x\": ");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not JSON"), std::string::npos);
}

}  // namespace
}  // namespace cleansweep
