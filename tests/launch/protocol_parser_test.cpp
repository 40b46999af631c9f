#include "launch/protocol_parser.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "util/utf8.hpp"

namespace cleansweep {
namespace {

TEST(ProtocolParser, ReadsStepsAttrsAndTheFinalValue) {
  ProtocolParser parser;
  std::vector<StepValue> steps;
  const std::string text = "{\"step\": 0, \"value\": 0.5}\n{\"attrs\": {\"a\": 1}}\n\n{\"step\": 1, \"val";
  parser.Feed(text.data(), text.size(), &steps);
  ASSERT_EQ(steps.size(), 1u);  // the second step line is not complete yet
  const std::string rest = "ue\": 0.75}\n{\"attrs\": {\"b\": \"x\"}, \"value\": 0.9}";
  parser.Feed(rest.data(), rest.size(), &steps);
  parser.Finish(&steps);  // the last line has no newline and still counts
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1].step, 1);
  EXPECT_EQ(steps[1].value, 0.75);
  EXPECT_EQ(parser.last_step(), 1);
  EXPECT_EQ(*parser.final_value(), 0.9);
  EXPECT_EQ(parser.attrs().dump(), R"({"a":1,"b":"x"})");
  EXPECT_FALSE(parser.error());
}

TEST(ProtocolParser, OutOfMemoryNotice) {
  ProtocolParser parser;
  std::vector<StepValue> steps;
  const std::string text = "{\"oom\": \"gpu\", \"message\": \"CUDA out of memory\"}\n";
  parser.Feed(text.data(), text.size(), &steps);
  EXPECT_EQ(*parser.oom(), "gpu");
  EXPECT_EQ(parser.oom_message(), "CUDA out of memory");
}

TEST(ProtocolParser, CheckpointDeclarationsFollowTheirLinesReports) {
  ProtocolParser parser;
  std::vector<StepValue> steps;
  const std::string text =
      "{\"step\": 3, \"value\": 0.5, \"checkpoint\": 3}\n{\"checkpoint\": 3}\n{\"checkpoint\": 7}\n";
  parser.Feed(text.data(), text.size(), &steps);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_FALSE(steps[0].checkpoint);  // the step's value first: it is stored before its checkpoint counts
  EXPECT_EQ(steps[0].value, 0.5);
  EXPECT_TRUE(steps[1].checkpoint);
  EXPECT_EQ(steps[1].step, 3);
  EXPECT_TRUE(steps[2].checkpoint);  // declaring the same step again is harmless
  EXPECT_EQ(steps[3].step, 7);
  EXPECT_EQ(parser.last_checkpoint(), 7);
  EXPECT_EQ(parser.last_step(), 3);  // a declaration is not a report
  EXPECT_FALSE(parser.error());
}

void ExpectError(const std::string& text, const std::string& expected) {
  ProtocolParser parser;
  std::vector<StepValue> steps;
  parser.Feed(text.data(), text.size(), &steps);
  parser.Finish(&steps);
  ASSERT_TRUE(parser.error()) << text;
  EXPECT_NE(parser.error()->find(expected), std::string::npos) << *parser.error();
}

TEST(ProtocolParser, MalformedLinesAreErrorsWithTheirLineNumber) {
  ExpectError("{\"value\": 1}\nnot json\n", "report line 2: not a JSON object: not json");
  ExpectError("[1, 2]\n", "not a JSON object");
  ExpectError("{\"valu\": 1}\n", "unknown key 'valu'");
  ExpectError("{\"value\": \"high\"}\n", "the final value must be a finite number");
  ExpectError("{\"value\": null}\n", "the final value must be a finite number");
  ExpectError("{\"value\": 1}\n{\"value\": 2}\n", "a final value was already reported");
  ExpectError("{\"step\": -1, \"value\": 1}\n", "step must be a whole number >= 0");
  ExpectError("{\"step\": 1.5, \"value\": 1}\n", "step must be a whole number >= 0");
  ExpectError("{\"step\": 1}\n", "an intermediate report needs a finite value");
  ExpectError("{\"attrs\": 3}\n", "attrs must be a JSON object");
  ExpectError("{\"oom\": \"disk\"}\n", "oom must be");
  ExpectError("{\"checkpoint\": -2}\n", "checkpoint must be a whole number >= 0");
  ExpectError("{\"checkpoint\": \"5\"}\n", "checkpoint must be a whole number >= 0");
  ExpectError("{\"checkpoint\": 5}\n{\"checkpoint\": 4}\n",
              "report line 2: checkpoint 4 comes after checkpoint 5: declared steps must not decrease");
  ExpectError(std::string(ProtocolParser::kMaxLineBytes + 10, 'x'), "without a newline");
}

// Issue 40: steps past 2^53 - 1 fail the trial with the number, in either key; 2^53 - 1 itself is
// a step like any other, and nothing past INT64_MAX wraps round to a small or negative one.
TEST(ProtocolParser, StepsAboveTheDocumentedMaximumFailTheTrial) {
  const std::string limit = " is above the largest step a trial may report, 9007199254740991 (2^53 - 1)";
  ExpectError("{\"step\": 9007199254740992, \"value\": 1}\n", "report line 1: step 9007199254740992" + limit);
  ExpectError("{\"step\": 9223372036854775807, \"value\": 0.5}\n", "step 9223372036854775807" + limit);
  ExpectError("{\"step\": 9223372036854775806, \"value\": 0.5}\n", "step 9223372036854775806" + limit);
  ExpectError("{\"step\": 4611686018427387904, \"value\": 0.5}\n", "step 4611686018427387904" + limit);
  ExpectError("{\"step\": 18446744073709551615, \"value\": 0.5}\n", "step 18446744073709551615" + limit);
  ExpectError("{\"step\": 1e300, \"value\": 0.5}\n", "step must be a whole number >= 0");
  ExpectError("{\"checkpoint\": 9223372036854775807}\n", "checkpoint 9223372036854775807" + limit);
  ExpectError("{\"step\": 1, \"value\": 1}\n{\"step\": 9007199254740992, \"value\": 1}\n",
              "report line 2: step 9007199254740992");

  ProtocolParser parser;
  std::vector<StepValue> steps;
  std::string text;
  for (std::int64_t s = 1; s <= ProtocolParser::kMaxStep; s *= 4) {  // 4^0 .. 4^26, all below the limit
    text += "{\"step\": " + std::to_string(s) + ", \"value\": -1e308, \"checkpoint\": " + std::to_string(s) + "}\n";
  }
  text += "{\"step\": 9007199254740991, \"value\": 1e308}\n{\"value\": 1e308}\n";
  parser.Feed(text.data(), text.size(), &steps);
  parser.Finish(&steps);
  ASSERT_FALSE(parser.error()) << *parser.error();
  EXPECT_EQ(parser.last_step(), ProtocolParser::kMaxStep);
  EXPECT_EQ(parser.last_checkpoint(), std::int64_t{1} << 52);
  EXPECT_EQ(steps.front().value, -1e308);
  EXPECT_EQ(*parser.final_value(), 1e308);
}

TEST(ProtocolParser, DepthAndAttrCountAreBounded) {
  std::string deep = "{\"attrs\": ";
  for (int i = 0; i < 30000; ++i) deep += "[";
  ProtocolParser parser;
  std::vector<StepValue> steps;
  const std::string text = deep + "\n{\"value\": 1}\n";
  parser.Feed(text.data(), text.size(), &steps);
  ASSERT_TRUE(parser.error().has_value());
  EXPECT_NE(parser.error()->find("report line 1: JSON nested deeper than 64 levels"), std::string::npos);
  EXPECT_FALSE(parser.final_value().has_value());  // nothing after the first error counts

  ProtocolParser many;
  std::string attrs = "{\"attrs\": {";
  for (size_t i = 0; i <= ProtocolParser::kMaxAttrs; ++i) attrs += (i ? ",\"a" : "\"a") + std::to_string(i) + "\": 1";
  attrs += "}}\n";
  many.Feed(attrs.data(), attrs.size(), &steps);
  ASSERT_TRUE(many.error().has_value());
  EXPECT_NE(many.error()->find("more than 1000 attrs"), std::string::npos);
}

TEST(ProtocolParser, AnEchoedBadLineIsCutOnACharacterBoundary) {
  std::string line;
  for (int i = 0; i < 100; ++i) line += "\xE2\x82\xAC";  // 300 bytes, not JSON
  line += "\n";
  ProtocolParser parser;
  std::vector<StepValue> steps;
  parser.Feed(line.data(), line.size(), &steps);
  ASSERT_TRUE(parser.error().has_value());
  EXPECT_TRUE(IsValidUtf8(*parser.error())) << *parser.error();
}

ProtocolParser TwoMetrics(const std::string& text, std::vector<StepValue>* steps) {
  ProtocolParser parser({"val_accuracy", "latency_ms"});
  parser.Feed(text.data(), text.size(), steps);
  parser.Finish(steps);
  return parser;
}

TEST(ProtocolParser, SeveralMetricsReportTheirFinalValuesByName) {
  std::vector<StepValue> steps;
  const ProtocolParser parser = TwoMetrics(
      "{\"step\": 0, \"values\": {\"val_accuracy\": 0.5, \"latency_ms\": 20}}\n"
      "{\"step\": 1, \"values\": {\"val_accuracy\": 0.7}}\n"
      "{\"step\": 2, \"value\": 0.8}\n"
      "{\"values\": {\"latency_ms\": 12.5, \"val_accuracy\": 0.91}}\n",
      &steps);
  ASSERT_FALSE(parser.error()) << *parser.error();
  EXPECT_EQ(parser.final_values(), (std::vector<double>{0.91, 12.5})) << "in the study's order, not the line's";
  EXPECT_EQ(*parser.final_value(), 0.91);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].value, 0.5) << "an intermediate report's value is the first metric's, which pruning uses";
  EXPECT_EQ(steps[0].values, (std::vector<double>{0.5, 20}));
  EXPECT_EQ(steps[1].values[0], 0.7);
  EXPECT_TRUE(std::isnan(steps[1].values[1])) << "a metric left out of a step is unknown there";
  EXPECT_EQ(steps[2].values[0], 0.8) << "value alone is the first metric";
}

TEST(ProtocolParser, AMissingOrUnknownMetricIsAnErrorThatNamesThem) {
  const auto error_of = [](const std::string& text) {
    std::vector<StepValue> steps;
    const ProtocolParser parser = TwoMetrics(text, &steps);
    return parser.error().value_or("(none)");
  };
  EXPECT_EQ(
      error_of("{\"values\": {\"val_accuracy\": 0.9}}"),
      "report line 1: the final values lack latency_ms (this study's reported metrics: val_accuracy, latency_ms)");
  EXPECT_EQ(error_of("{\"values\": {\"val_accuracy\": 0.9, \"latency_ms\": 1, \"loss\": 2}}"),
            "report line 1: unknown metric 'loss' (this study's reported metrics: val_accuracy, latency_ms)");
  EXPECT_NE(error_of("{\"value\": 0.9}")
                .find("this study's trials report several metrics (val_accuracy, "
                      "latency_ms): give them all as {\"values\": {\"val_accuracy\": ..., ...}}"),
            std::string::npos);
  EXPECT_EQ(error_of("{\"step\": 1, \"values\": {\"latency_ms\": 3}}"),
            "report line 1: an intermediate report needs the first metric, val_accuracy (pruning uses it)");
  EXPECT_EQ(error_of("{\"values\": {\"val_accuracy\": \"high\", \"latency_ms\": 1}}"),
            "report line 1: metric 'val_accuracy' must be a finite number");
  EXPECT_EQ(error_of("{\"values\": [0.9, 1]}"),
            "report line 1: values must be a JSON object of metric names and numbers");
  EXPECT_EQ(error_of("{\"value\": 1, \"values\": {}}"), "report line 1: give value or values, not both");
}

TEST(ProtocolParser, ASingleMetricMayAlsoBeReportedByName) {
  ProtocolParser parser({"loss"});
  std::vector<StepValue> steps;
  const std::string text = "{\"step\": 0, \"values\": {\"loss\": 2}}\n{\"values\": {\"loss\": 1.5}}\n";
  parser.Feed(text.data(), text.size(), &steps);
  ASSERT_FALSE(parser.error()) << *parser.error();
  EXPECT_EQ(*parser.final_value(), 1.5);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(steps[0].values.empty()) << "one metric: the value is all there is";
}

}  // namespace
}  // namespace cleansweep
