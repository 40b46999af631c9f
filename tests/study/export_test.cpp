#include "study/export.hpp"

#include <sstream>

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

}  // namespace
}  // namespace cleansweep
