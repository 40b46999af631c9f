#include <fstream>
#include <sstream>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/borrowed_store.hpp"
#include "support/faults.hpp"

#include "report/report.hpp"
#include "support/manual_clock.hpp"
#include "support/memory_study_store.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

ReportInput Input() {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: r, direction: maximize}\ntrial: {command: [sh]}\nspace:\n  x: {type: float, low: 0, high: 1}\n",
      "r.yaml");
  EXPECT_TRUE(config.ok());
  ReportInput input;
  input.config = *config;
  input.path = "r.h5";
  return input;
}

TrialRecord Trial(std::int64_t n, const std::string& reason = "") {
  TrialRecord r;
  r.number = n;
  r.state = reason.empty() ? TrialState::kComplete : TrialState::kFail;
  if (reason.empty()) r.value = 0.5;
  r.params = {{"x", 0.25}};
  r.reason = reason;
  return r;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

using testing::BorrowedStore;

TEST(RenderReport, IsOnePageWhoseDataCannotEndItsScript) {
  ReportInput input = Input();
  // A trial's words reach the page (an OOM message, a key its report got wrong): "</script>" would
  // end the data's element; "<!--<script>" would make the HTML parser read past its end tag.
  const std::string words = "ended with </script><b>bold</b>, then <!--<script> held open";
  input.trials = {Trial(0), Trial(1, words + " and \xff bad UTF-8")};
  const std::string html = RenderReport(input);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  const std::string open = "<script id=\"study-data\" type=\"application/json\">";
  const size_t data = html.find(open);
  ASSERT_NE(data, std::string::npos);
  const size_t end = html.find("</script>", data);
  const std::string block = html.substr(data + open.size(), end - data - open.size());
  EXPECT_EQ(block.find('<'), std::string::npos) << "every < inside the data must be escaped";
  const nlohmann::json parsed = nlohmann::json::parse(block);
  EXPECT_EQ(parsed["trials"][1]["r"], words + " and \xef\xbf\xbd bad UTF-8");  // the text, U+FFFD for the bad byte
  EXPECT_EQ(html.find("@DATA@"), std::string::npos);
  EXPECT_EQ(html.find("@JS@"), std::string::npos);
  EXPECT_EQ(html.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(html.find("<title>cleansweep: r</title>"), std::string::npos);
}

TEST(ReportingStore, RewritesTheReportDuringTheRunAndStopsTheReloadAtTheEnd) {
  testing::TempDir dir;
  const std::string path = dir.File("r.html");
  testing::MemoryStudyStore* inner = nullptr;
  {
    auto memory = std::make_unique<testing::MemoryStudyStore>();
    inner = memory.get();
    ReportInput base = Input();
    base.trials = {Trial(0)};  // from the file being resumed
    testing::ManualClock clock;
    ReportingStore store(std::move(memory), std::move(base), path, Millis(5000), &clock);
    ASSERT_TRUE(store.PutTrial(Trial(1)).ok());
    const std::string live = Read(path);
    EXPECT_NE(live.find("<meta http-equiv=\"refresh\" content=\"5\">"), std::string::npos);
    EXPECT_NE(live.find("\"n\":1"), std::string::npos);
    EXPECT_NE(live.find("\"n\":0"), std::string::npos);
    clock.Advance(Millis(4999));
    ASSERT_TRUE(store.PutTrial(Trial(2)).ok());  // within 5 s: not redrawn yet
    EXPECT_EQ(Read(path).find("\"n\":2"), std::string::npos);
    clock.Advance(Millis(1));
    ASSERT_TRUE(store.PutTrial(Trial(3)).ok());  // 5 s after the last drawing: redrawn, with both
    EXPECT_NE(Read(path).find("\"n\":2"), std::string::npos);
    EXPECT_NE(Read(path).find("\"n\":3"), std::string::npos);
    clock.Advance(Millis(1000));
    ASSERT_TRUE(store.PutTrial(Trial(4)).ok());
    EXPECT_EQ(Read(path).find("\"n\":4"), std::string::npos);
    EXPECT_EQ(inner->trials().size(), 4u);  // everything reaches the real store
  }
  const std::string final_report = Read(path);  // the end of the run draws whatever is left
  EXPECT_NE(final_report.find("\"n\":4"), std::string::npos);
  EXPECT_EQ(final_report.find("http-equiv=\"refresh\""), std::string::npos);
}

// Issue 15: the live page was redrawn before the group commit's flush, so it could show rows the
// file did not have yet (and never would, had the flush failed).
TEST(ReportingStore, DrawsOnlyRowsTheFileHasAfterTheFlush) {
  testing::TempDir dir;
  const std::string path = dir.File("r.html");
  {
    testing::FaultyStore inner(testing::FaultyStore::Call::kFlush, 2);  // the second flush fails
    ReportingStore store(std::make_unique<BorrowedStore>(&inner), Input(), path, Millis(1000));
    store.DeferFlush(true);
    ASSERT_TRUE(store.PutTrial(Trial(1)).ok());
    EXPECT_FALSE(std::filesystem::exists(path)) << "drawn before the flush";
    ASSERT_TRUE(store.Flush().ok());
    EXPECT_NE(Read(path).find("\"n\":1"), std::string::npos);
    ASSERT_TRUE(store.PutTrial(Trial(2)).ok());
    EXPECT_FALSE(store.Flush().ok());  // trial 2 never became durable
  }
  const std::string final_report = Read(path);
  EXPECT_NE(final_report.find("\"n\":1"), std::string::npos);
  EXPECT_EQ(final_report.find("\"n\":2"), std::string::npos) << "the page shows a row the file does not have";
}

}  // namespace
}  // namespace cleansweep
