#include "study/study_file.hpp"
#include "study/table_layout.hpp"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::TempDir;

StudyConfig Config(const std::string& storage) {
  Result<StudyConfig> config = LoadConfigText("study: {name: s, direction: maximize, metric: acc, storage: " + storage +
                                                  "}\nsampler: {kind: random, seed: 9}\ntrial: {command: [p]}\nspace:\n"
                                                  "  lr: {type: float, low: 0.001, high: 0.1, log: true}\n"
                                                  "  n: {type: int, low: 1, high: 8}\n"
                                                  "  opt: {type: categorical, choices: [sgd, adam]}\n"
                                                  "  m: {type: float, low: 0.0, high: 1.0, when: {opt: sgd}}\n"
                                                  "  k: {type: int, low: 1, high: 3, when: {opt: sgd}}\n"
                                                  "  flag: {type: categorical, choices: [true, false]}\n"
                                                  "  width: {type: categorical, choices: [16, 32]}\n"
                                                  "  epochs: 3\n",
                                              "s.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

TrialRecord Record(std::int64_t number, bool sgd) {
  TrialRecord r;
  r.number = number;
  r.state = sgd ? TrialState::kComplete : TrialState::kOomGpu;
  if (sgd) r.value = 0.5 + static_cast<double>(number) / 100;
  r.params = {{"lr", 0.01},   {"n", std::int64_t{3}},      {"opt", std::string(sgd ? "sgd" : "adam")},
              {"flag", true}, {"width", std::int64_t{32}}, {"epochs", std::int64_t{3}}};
  if (sgd) {
    r.params["m"] = 0.9;
    r.params["k"] = std::int64_t{2};
  }
  r.start_time = 1000.0 + static_cast<double>(number);
  r.end_time = r.start_time + 2.5;
  r.worker = 2;
  r.host = "node1";
  r.gpu = sgd ? "1" : "";
  r.exit_code = sgd ? 0 : 75;
  r.peak_rss_kb = 123456;
  r.last_step = 4;
  r.enqueued = number == 0;
  r.sampler_ms = 0.25 * static_cast<double>(number);
  r.reason = sgd ? "" : "out of GPU memory";
  r.output_tail = "last line\n";
  r.attrs_json = R"({"n_params":1000})";
  return r;
}

TEST(StudyFile, WritesAndReadsBackEveryField) {
  TempDir dir;
  const std::string path = dir.File("sub/dir/s.h5");  // folders are created
  const StudyConfig config = Config(path);
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (int i = 0; i < 150; ++i) {  // more rows than one chunk
      ASSERT_TRUE((*file)->PutTrial(Record(i, i % 3 != 0)).ok());
      ASSERT_TRUE((*file)->AppendIntermediate({i, 0, 0.25, 1000.0}).ok());
    }
  }
  Result<StudyData> study = ReadStudyFile(path);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_EQ(study->config.study.name, "s");
  EXPECT_EQ(study->config.study.metric, "acc");
  EXPECT_EQ(study->sampler, "random");
  EXPECT_EQ(study->seed, 9);
  EXPECT_EQ(study->schema_version, kStudySchemaVersion);
  ASSERT_EQ(study->trials.size(), 150u);
  ASSERT_EQ(study->intermediate.size(), 150u);
  for (int i = 0; i < 150; ++i) {
    const TrialRecord expected = Record(i, i % 3 != 0);
    const TrialRecord& got = study->trials[static_cast<size_t>(i)];
    EXPECT_EQ(got.number, expected.number);
    EXPECT_EQ(got.state, expected.state);
    EXPECT_EQ(got.value, expected.value);
    EXPECT_EQ(got.params, expected.params) << "trial " << i;
    EXPECT_EQ(got.start_time, expected.start_time);
    EXPECT_EQ(got.end_time, expected.end_time);
    EXPECT_EQ(got.worker, 2);
    EXPECT_EQ(got.host, "node1");
    EXPECT_EQ(got.gpu, expected.gpu);
    EXPECT_EQ(got.exit_code, expected.exit_code);
    EXPECT_EQ(got.peak_rss_kb, 123456);
    EXPECT_EQ(got.last_step, 4);
    EXPECT_EQ(got.enqueued, expected.enqueued);
    EXPECT_EQ(got.sampler_ms, expected.sampler_ms);
    EXPECT_EQ(got.reason, expected.reason);
    EXPECT_EQ(got.output_tail, "last line\n");
    EXPECT_EQ(got.attrs_json, expected.attrs_json);
  }
  EXPECT_EQ(study->intermediate[149].trial, 149);
  EXPECT_EQ(study->intermediate[149].value, 0.25);
}

TEST(StudyFile, RowsAreDurableBeforeTheFileIsClosed) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->PutTrial(Record(0, true)).ok());
  // A second reader sees the flushed row while the writer still holds the file.
  const std::string copy = dir.File("copy.h5");
  std::filesystem::copy_file(path, copy);
  Result<StudyData> study = ReadStudyFile(copy);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_EQ(study->trials.size(), 1u);
}

TEST(StudyFile, RefusesToOverwrite) {
  TempDir dir;
  const std::string path = dir.Write("s.h5", "precious");
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Status::Code::kInvalidInput);
  EXPECT_NE(file.status().message().find("already exists"), std::string::npos);
  EXPECT_EQ(testing::ReadFile(path), "precious");
}

TEST(StudyFile, UnwritablePlaceLeavesNothing) {
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create("/proc/no/such/s.h5", Config("/proc/no/such/s.h5"));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Status::Code::kIoError);
  EXPECT_NE(file.status().message().find("/proc/no/such"), std::string::npos);
}

TEST(StudyFile, ReadingSomethingElseIsAClearError) {
  TempDir dir;
  EXPECT_NE(ReadStudyFile(dir.File("missing.h5")).status().message().find("no such study file"), std::string::npos);
  EXPECT_NE(ReadStudyFile(dir.Write("x.h5", "hello")).status().message().find("not an HDF5 file"), std::string::npos);
}

TEST(TableLayout, ParameterColumnTypesFollowTheirValues) {
  const StudyConfig config = Config("x.h5");
  EXPECT_EQ(ParamColumnType(*config.space.Find("lr")), ColumnType::kFloat64);
  EXPECT_EQ(ParamColumnType(*config.space.Find("n")), ColumnType::kInt64);
  EXPECT_EQ(ParamColumnType(*config.space.Find("k")), ColumnType::kFloat64);  // conditional: NaN when inactive
  EXPECT_EQ(ParamColumnType(*config.space.Find("opt")), ColumnType::kString);
  EXPECT_EQ(ParamColumnType(*config.space.Find("flag")), ColumnType::kString);
  EXPECT_EQ(ParamColumnType(*config.space.Find("width")), ColumnType::kInt64);
  EXPECT_EQ(ParamColumnType(*config.space.Find("epochs")), ColumnType::kInt64);
}

}  // namespace
}  // namespace cleansweep
