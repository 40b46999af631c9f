#include "study/export.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cleansweep {
namespace {

StudyData Study() {
  StudyData study;
  study.config = *LoadConfigText(
      "study: {name: e}\ntrial: {command: [p]}\nspace:\n  opt: {type: categorical, choices: [sgd, adam]}\n"
      "  m: {type: float, low: 0.0, high: 1.0, when: {opt: sgd}}\n",
      "e.yaml");
  TrialRecord a;
  a.number = 0;
  a.state = TrialState::kComplete;
  a.value = 0.5;
  a.params = {{"opt", std::string("sgd")}, {"m", 0.25}};
  a.attrs_json = R"({"note": "has, comma", "size": 3})";
  a.output_tail = "line \"quoted\"\n";
  TrialRecord b;
  b.number = 1;
  b.state = TrialState::kFail;
  b.params = {{"opt", std::string("adam")}};
  b.reason = "exited with status 3";
  a.attempt = 2;  // went on from its checkpoint of step 4 after an interruption
  a.resumed_from = 4;
  a.checkpoint_step = 9;
  TrialRecord first = a;
  first.attempt = 1;
  first.state = TrialState::kInterrupted;
  first.resumed_from = -1;
  first.checkpoint_step = 4;
  first.reason = "interrupted: the study's time budget was reached";
  study.trials = {a, b};
  study.intermediate = {{0, 1, 0.4, 10.0, {}}};
  study.attempts = {first};
  return study;
}

TEST(Export, CsvHasTheDocumentedColumnsAndQuoting) {
  std::ostringstream out;
  WriteCsv(Study(), out);
  std::istringstream lines(out.str());
  std::string header, row0, row0_cont, row1;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "number,state,value,param_opt,param_m,attr_note,attr_size,datetime_start,datetime_end,duration,worker,"
            "host,gpu,exit_code,signal,peak_rss_kb,attempt,retry_of,enqueued,sampler_ms,last_step,gpu_mem_before_mb,"
            "gpu_mem_peak_mb,gpu_mem_after_mb,gpu_mem_foreign_mb,datetime_worker_free,cpu_seconds,gpu_seconds,energy_j,"
            "violation,checkpoint_step,resumed_from,parent,generation,gpus,workers,peak_rss_max_kb,gpu_mem_peak_max_mb,"
            "reason,output_tail");
  std::getline(lines, row0);
  EXPECT_EQ(row0.rfind("0,COMPLETE,0.5,sgd,0.25,\"has, comma\",3,", 0), 0u) << row0;
  std::getline(lines, row0_cont);  // the quoted output tail spans two lines
  EXPECT_EQ(row0_cont, "\"");
  std::getline(lines, row1);
  EXPECT_EQ(row1.rfind("1,FAIL,,adam,,,,", 0), 0u) << row1;
  EXPECT_NE(row1.find("exited with status 3"), std::string::npos);
  EXPECT_NE(row1.find(",-1,,,,,,,,,,-1,-1,-1,0,1,,0,,exited with status 3"), std::string::npos)
      << "unknown GPU memory, worker-free time, cost and violation are empty: " << row1;
}

TEST(Export, JsonCarriesParamsAttrsAndIntermediateValues) {
  std::ostringstream out;
  WriteJson(Study(), out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["study"]["name"], "e");
  ASSERT_EQ(doc["trials"].size(), 2u);
  EXPECT_EQ(doc["trials"][0]["params"]["m"], 0.25);
  EXPECT_EQ(doc["trials"][0]["attrs"]["size"], 3);
  EXPECT_TRUE(doc["trials"][1]["value"].is_null());
  EXPECT_TRUE(doc["trials"][1]["gpu_mem_peak_mb"].is_null());
  EXPECT_FALSE(doc["trials"][1]["params"].contains("m"));
  EXPECT_EQ(doc["intermediate"][0]["step"], 1);
  EXPECT_EQ(doc["trials"][0]["resumed_from"], 4);
  EXPECT_EQ(doc["trials"][0]["checkpoint_step"], 9);
  ASSERT_EQ(doc["attempts"].size(), 1u);
  EXPECT_EQ(doc["attempts"][0]["trial"], 0);
  EXPECT_EQ(doc["attempts"][0]["state"], "INTERRUPTED");
  EXPECT_EQ(doc["attempts"][0]["checkpoint_step"], 4);
  EXPECT_TRUE(doc["attempts"][0]["cpu_seconds"].is_null());
}

// Issue 15: `export --format json` aborted (json::type_error) on a tail, reason or host that was
// not UTF-8, and cleansweep itself used to cut text mid-character.
TEST(Export, TextThatIsNotUtf8ExportsWithoutAborting) {
  StudyData study = Study();
  study.trials[0].output_tail = "cut mid-character: \xE2\x82\n\xFF\xFE raw bytes\n";
  study.trials[1].reason = "reason \xC3";
  study.trials[1].host = "h\xF0\x9F";
  std::ostringstream json;
  ASSERT_NO_THROW(WriteJson(study, json));
  const nlohmann::json doc = nlohmann::json::parse(json.str());  // valid JSON, hence valid UTF-8
  EXPECT_EQ(doc["trials"][1]["reason"], "reason \xEF\xBF\xBD");
  std::ostringstream csv;
  WriteCsv(study, csv);
  EXPECT_NE(csv.str().find("\xFF\xFE raw bytes"), std::string::npos);  // CSV keeps the trial's bytes
}

// Trials that each name their own attributes: the columns stop at kMaxAttrColumns, those the most
// trials hold, and every other attribute still reaches its row, in attrs_other. Uncapped, 200
// trials of 1,000 names each made a CSV of 200,000 columns (43 MB); the size grew with trials times
// names.
TEST(Export, AttributeColumnsAreCappedAndNothingIsLost) {
  StudyData study = Study();
  study.trials.clear();
  for (int t = 0; t < 30; ++t) {
    TrialRecord r;
    r.number = t;
    r.state = TrialState::kComplete;
    r.value = 0.5;
    nlohmann::json attrs = {{"shared", t}, {"common", "c"}};
    for (int k = 0; k < 100; ++k) attrs["own_" + std::to_string(t) + "_" + std::to_string(k)] = k;
    r.attrs_json = attrs.dump();
    study.trials.push_back(r);
  }
  std::ostringstream out;
  const CsvShape shape = WriteCsv(study, out);
  EXPECT_EQ(shape.attr_names, 2u + 30 * 100);
  EXPECT_EQ(shape.attr_columns, kMaxAttrColumns);
  std::istringstream lines(out.str());
  std::string header;
  std::getline(lines, header);
  std::vector<std::string> columns;
  for (std::istringstream cells(header); std::getline(cells, header, ',');) columns.push_back(header);
  const auto count =
      std::count_if(columns.begin(), columns.end(), [](const std::string& c) { return c.rfind("attr_", 0) == 0; });
  EXPECT_EQ(static_cast<size_t>(count), kMaxAttrColumns);
  EXPECT_NE(std::find(columns.begin(), columns.end(), "attr_shared"), columns.end());  // held by every trial
  EXPECT_NE(std::find(columns.begin(), columns.end(), "attr_common"), columns.end());
  const size_t other = static_cast<size_t>(std::find(columns.begin(), columns.end(), "attrs_other") - columns.begin());
  ASSERT_LT(other, columns.size());
  // Each row: every attribute once, in its column or in attrs_other.
  std::string row;
  for (int t = 0; t < 30; ++t) {
    ASSERT_TRUE(std::getline(lines, row));
    std::vector<std::string> cells;
    // attrs_other is quoted JSON ("" for each "); the cells before it hold no comma.
    size_t at = 0;
    for (size_t c = 0; c < other; ++c) {
      const size_t comma = row.find(',', at);
      cells.push_back(row.substr(at, comma - at));
      at = comma + 1;
    }
    std::string rest;
    if (row[at] == '"') {
      for (size_t i = at + 1; i < row.size(); ++i) {
        if (row[i] == '"' && i + 1 < row.size() && row[i + 1] == '"') {
          rest += '"';
          ++i;
        } else if (row[i] == '"') {
          break;
        } else {
          rest += row[i];
        }
      }
    }
    std::set<std::string> seen;
    for (size_t c = 0; c < other; ++c) {
      if (columns[c].rfind("attr_", 0) == 0 && !cells[c].empty()) seen.insert(columns[c].substr(5));
    }
    const size_t in_columns = seen.size();
    if (!rest.empty()) {
      const nlohmann::json others = nlohmann::json::parse(rest);
      for (const auto& item : others.items()) EXPECT_TRUE(seen.insert(item.key()).second) << item.key();
    }
    EXPECT_EQ(seen.size(), 102u) << "trial " << t << ": " << in_columns << " in columns";
  }
  // Under the cap nothing changes: no attrs_other.
  std::ostringstream few;
  EXPECT_EQ(WriteCsv(Study(), few).attr_columns, 2u);
  EXPECT_EQ(few.str().find("attrs_other"), std::string::npos);
}

}  // namespace
}  // namespace cleansweep
