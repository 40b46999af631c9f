#include "study/study_file.hpp"
#include "study/table_layout.hpp"

#include <cmath>
#include <filesystem>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "study/hdf5_handle.hpp"
#include "study/study_differences.hpp"
#include "study/study_lock.hpp"
#include "study/study_reader.hpp"
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
  r.checkpoint_step = number % 5 == 0 ? -1 : number % 7;
  r.resumed_from = number % 5 == 0 ? -1 : number % 3;
  r.parent = number % 4 == 0 ? -1 : number / 2;  // population-based training's lineage
  r.generation = number % 4 == 0 ? 0 : number % 6;
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
      ASSERT_TRUE((*file)->AppendIntermediate({i, 0, 0.25, 1000.0, {}}).ok());
    }
    TrialRecord earlier = Record(7, true);  // trial 7's first attempt, cut off after step 3's checkpoint
    earlier.state = TrialState::kInterrupted;
    earlier.attempt = 1;
    earlier.checkpoint_step = 3;
    earlier.cpu_seconds = 12.5;
    earlier.reason = std::string(300, 'r');  // wider than the fixed 256 bytes: cut, not spilled
    ASSERT_TRUE((*file)->AppendAttempt(earlier).ok());
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
    EXPECT_EQ(got.checkpoint_step, expected.checkpoint_step);
    EXPECT_EQ(got.resumed_from, expected.resumed_from);
    EXPECT_EQ(got.parent, expected.parent);
    EXPECT_EQ(got.generation, expected.generation);
  }
  ASSERT_EQ(study->attempts.size(), 1u);
  const TrialRecord& attempt = study->attempts[0];
  EXPECT_EQ(attempt.number, 7);
  EXPECT_EQ(attempt.attempt, 1);
  EXPECT_EQ(attempt.state, TrialState::kInterrupted);
  EXPECT_EQ(attempt.checkpoint_step, 3);
  EXPECT_EQ(attempt.resumed_from, Record(7, true).resumed_from);
  EXPECT_EQ(attempt.host, "node1");
  EXPECT_EQ(attempt.cpu_seconds, 12.5);
  EXPECT_EQ(attempt.reason, std::string(256, 'r'));
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
  std::filesystem::create_directory(dir.File("results"));
  EXPECT_NE(ReadStudyFile(dir.File("results")).status().message().find("results: a folder, not a study file"),
            std::string::npos);
}

TEST(StudyFile, AKilledWriterLeavesAFileThatOpensAndResumes) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  const pid_t writer = ::fork();
  if (writer == 0) {  // writes two rows, then dies without closing anything
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    if (!file.ok()) ::_exit(1);
    TrialRecord running = Record(1, true);
    running.state = TrialState::kRunning;
    running.value.reset();
    if (!(*file)->PutTrial(Record(0, true)).ok() || !(*file)->PutTrial(running).ok() ||
        !(*file)->AppendIntermediate({1, 0, 0.5, 1.0, {}}).ok()) {
      ::_exit(2);
    }
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited " << WEXITSTATUS(status);

  Result<StudyData> read = ReadStudyFile(path);  // opens although "open for writing" is still set
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->trials.size(), 2u);
  EXPECT_EQ(read->trials[1].state, TrialState::kRunning);
  EXPECT_EQ(read->intermediate.size(), 1u);

  Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, Config(path));
  ASSERT_TRUE(file.ok()) << file.status().message();
  TrialRecord interrupted = read->trials[1];
  interrupted.state = TrialState::kInterrupted;
  ASSERT_TRUE((*file)->PutTrial(interrupted).ok());  // the same row, corrected
  TrialRecord rerun = Record(2, true);
  rerun.retry_of = 1;
  rerun.attempt = 2;
  ASSERT_TRUE((*file)->PutTrial(rerun).ok());
  ASSERT_TRUE((*file)->AppendIntermediate({2, 0, 0.5, 2.0, {}}).ok());
  file->reset();

  read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->trials.size(), 3u);
  EXPECT_EQ(read->trials[1].number, 1);
  EXPECT_EQ(read->trials[1].state, TrialState::kInterrupted);
  EXPECT_EQ(read->trials[2].retry_of, 1);
  EXPECT_EQ(read->trials[2].attempt, 2);
  EXPECT_EQ(read->intermediate.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(StudyLock::LockPath(path)));  // released and removed
}

// A resume with the stored config opens the file straight into SWMR writing and leaves the stored
// config alone; one whose config changed (--set on resume) stores the new text. Both stay readable
// while they write, and after.
TEST(StudyFile, ResumingKeepsOrReplacesTheStoredConfigAsItChanged) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  ASSERT_TRUE(StudyFile::Create(path, Config(path)).ok());
  for (const bool change : {false, true}) {
    StudyConfig config = Config(path);
    if (change) config.yaml_text += "# resumed with --set\n";
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE((*file)->PutTrial(Record(change ? 1 : 0, true)).ok());
    Result<StudyData> during = ReadStudyFile(path);  // a reader while the writer holds the file
    ASSERT_TRUE(during.ok()) << during.status().message();
    EXPECT_EQ(during->config.yaml_text, config.yaml_text);
    file->reset();
  }
  Result<StudyData> read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->trials.size(), 2u);
  EXPECT_NE(read->config.yaml_text.find("# resumed with --set"), std::string::npos);
}

// A resume that changed the config opens the file plainly for a moment, which HDF5 refuses while
// another process holds its lock (a reader opening it, or one without SWMR for as long as it keeps
// it open): the resume waits for the reader to let go instead of failing at once.
TEST(StudyFile, AResumeWaitsForAReaderThatHoldsTheFileLock) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  ASSERT_TRUE(StudyFile::Create(path, Config(path)).ok());
  int opened[2];
  ASSERT_EQ(::pipe(opened), 0);
  const pid_t reader = ::fork();
  if (reader == 0) {  // a plain (non-SWMR) reader that keeps the file open for 700 ms
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) ::_exit(1);
    if (::write(opened[1], "x", 1) != 1) ::_exit(2);
    ::usleep(700'000);
    H5Fclose(f);
    ::_exit(0);
  }
  ::close(opened[1]);
  char byte = 0;
  ASSERT_EQ(::read(opened[0], &byte, 1), 1) << "the reader could not open the file";
  ::close(opened[0]);
  StudyConfig changed = Config(path);
  changed.yaml_text += "# resumed with --set\n";
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, changed);
  int status = 0;
  ASSERT_EQ(::waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE((*file)->PutTrial(Record(0, true)).ok());
  file->reset();
  Result<StudyData> read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_NE(read->config.yaml_text.find("# resumed with --set"), std::string::npos);
}

// A process that does what HDF5's open of `path` does first, taking a shared lock on the file, as
// often as it can (a program waiting for the study file, opening it again and again), until killed.
pid_t ForkLockTaker(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::flock(fd, LOCK_SH | LOCK_NB);
    ::close(fd);
  }
}

// A program that waits for the study file and opens it again and again (a monitoring loop started
// before the run) made the run fail with "unable to lock file": HDF5 takes a lock on a file while
// it opens it, and a reader's lock taken in the moments between the file's creation and SWMR
// writing made the writer's own lock fail. Found as a CI failure of reliability.pbt, whose poller
// does just that.
TEST(StudyFile, AReaderWaitingForTheFileNeverMakesItsCreationFail) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  const pid_t reader = ForkLockTaker(path);
  int failures = 0;
  std::string first_failure;
  for (int i = 0; i < 40; ++i) {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    if (!file.ok()) {
      if (failures++ == 0) first_failure = file.status().message();
      continue;
    }
    EXPECT_TRUE((*file)->PutTrial(Record(0, true)).ok());
    file->reset();
    std::filesystem::remove(path);
  }
  ::kill(reader, SIGKILL);
  ::waitpid(reader, nullptr, 0);
  EXPECT_EQ(failures, 0) << "of 40 creations; the first: " << first_failure;
  // Made under a hidden name and renamed into place: nothing of it is left beside the study.
  EXPECT_FALSE(std::filesystem::exists(dir.File(".s.h5.creating")));
}

// The same reader beside resumes that change the config (resume --set), which open the file
// plainly to rewrite its attributes before SWMR writing.
TEST(StudyFile, AReaderWaitingForTheFileNeverMakesAResumeThatChangesTheConfigFail) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  ASSERT_TRUE(StudyFile::Create(path, Config(path)).ok());
  const pid_t reader = ForkLockTaker(path);
  int failures = 0;
  std::string first_failure;
  for (int i = 0; i < 60; ++i) {
    StudyConfig changed = Config(path);
    changed.yaml_text += "# resumed with --set, " + std::to_string(i) + "\n";
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, changed);
    if (!file.ok()) {
      if (failures++ == 0) first_failure = file.status().message();
      continue;
    }
    EXPECT_TRUE((*file)->PutTrial(Record(i, true)).ok());
  }
  ::kill(reader, SIGKILL);
  ::waitpid(reader, nullptr, 0);
  EXPECT_EQ(failures, 0) << "of 60 resumes; the first: " << first_failure;
  Result<StudyData> read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->trials.size(), static_cast<size_t>(60 - failures));
}

// Issue 15: `resume --set sampler.kind=tpe` left the root attribute saying random, and after
// --force with another direction `show` and the `direction` attribute disagreed.
TEST(StudyFile, AResumeThatChangesTheConfigRewritesEveryRootAttributeAndRecordsWhat) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  ASSERT_TRUE(StudyFile::Create(path, Config(path)).ok());
  Result<StudyConfig> changed = LoadConfigText(Config(path).yaml_text, "s.yaml",
                                               {"sampler.kind=tpe", "sampler.seed=10", "study.direction=minimize"});
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  ASSERT_TRUE(StudyFile::Reopen(path, *changed).ok());
  Result<StudyData> read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->sampler, "tpe");
  EXPECT_EQ(read->seed, 10);
  EXPECT_EQ(read->config.sampler.kind, "tpe");
  EXPECT_EQ(read->config.study.direction, Direction::kMinimize);
  const nlohmann::json history = nlohmann::json::parse(read->config_history);
  ASSERT_EQ(history.size(), 1u) << read->config_history;
  const std::string changes = history[0]["changes"].dump();
  for (const char* change :
       {"sampler: random -> tpe", "seed: 9 -> 10", "direction: maximize -> minimize", "config replaced",
        R"(metrics: [{\"direction\":\"maximize\",\"name\":\"acc\"}] -> [{\"direction\":\"minimize\")"}) {
    EXPECT_NE(changes.find(change), std::string::npos) << changes;
  }
  EXPECT_EQ(changes.find("\"metric:"), std::string::npos) << changes;  // what did not change is not listed
  // h5py's view: the attribute the docs tell people to read says the same.
  h5::QuietErrors();
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
  EXPECT_EQ(*h5::ReadStringAttr(file.get(), "direction"), "minimize");
  EXPECT_EQ(*h5::ReadStringAttr(file.get(), "sampler"), "tpe");
}

// `sampler: {kind: auto}` (the default): h5py finds the sampler it chose, never "auto", and why.
TEST(StudyFile, TheSamplerAutoChoseAndWhyAreRootAttributes) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  Result<StudyConfig> chosen = LoadConfigText(Config(path).yaml_text, "s.yaml", {"sampler.kind=auto"});
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_NE(chosen->sampler.kind, "auto");
  ASSERT_EQ(chosen->sampler.reason.rfind("auto: ", 0), 0u) << chosen->sampler.reason;
  ASSERT_TRUE(StudyFile::Create(path, *chosen).ok());
  h5::QuietErrors();
  {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
    EXPECT_EQ(*h5::ReadStringAttr(file.get(), "sampler"), chosen->sampler.kind);
    EXPECT_EQ(*h5::ReadStringAttr(file.get(), "sampler_reason"), chosen->sampler.reason);
  }
  // A resume that names the sampler rewrites both: the reason goes.
  Result<StudyConfig> named = LoadConfigText(Config(path).yaml_text, "s.yaml", {"sampler.kind=sobol"});
  ASSERT_TRUE(named.ok()) << named.status().message();
  ASSERT_TRUE(StudyFile::Reopen(path, *named).ok());
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
  EXPECT_EQ(*h5::ReadStringAttr(file.get(), "sampler"), "sobol");
  EXPECT_EQ(*h5::ReadStringAttr(file.get(), "sampler_reason"), "");
}

// Issue 15: with assertions compiled out, a misspelled column made RowBuffer::Set write through a
// null pointer; the check stays on in release builds and stops with the place.
TEST(RowBufferDeathTest, AMisspelledColumnStopsInsteadOfWritingAnywhere) {
  const RowLayout layout = IntermediateLayout(Config("s.h5").study);
  RowBuffer row(layout);
  EXPECT_DEATH(row.Set("valeu", 1.0), "check failed");
}

// Files on which HDF5 itself crashes (found by libFuzzer on fuzz_study_reader; kept in
// tests/fuzz/regressions/): the reader's child dies, the caller gets "damaged", this process lives.
TEST(StudyReader, FilesThatCrashHdf5AreDamagedNotFatal) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CLEANSWEEP_SOURCE_DIR) +
                                                               "/tests/fuzz/regressions/study_reader")) {
    ++files;
    const Result<StudyData> read = ReadStudyFile(entry.path().string());
    ASSERT_FALSE(read.ok()) << entry.path();
    EXPECT_EQ(read.status().code(), Status::Code::kInvalidInput);
    EXPECT_NE(read.status().message().find("the study file is damaged"), std::string::npos) << read.status().message();
  }
  EXPECT_GE(files, 4);
}

// The reading child is given processor time, not only time on the clock: one that computes past
// its share (HDF5 round a loop on a damaged file) makes the file damaged; one the machine starves
// (it mostly waits) finishes, however long the clock ran, up to a far larger bound, and past that
// the read is too slow, not the file damaged. A wall-clock deadline alone called a healthy file
// damaged on a busy machine (reliability.live_readers: 2 of 72 `show`s beside a sweep, 5 s).
TEST(StudyReader, TheReadingChildIsJudgedByTheProcessorTimeItUsed) {
  using std::chrono::milliseconds;
  const Result<StudyData> spinning = ReadStudyFileGuarded("s.h5", {milliseconds(200), milliseconds(600000)},
                                                          [](const std::string&) -> Result<StudyData> {
                                                            for (volatile unsigned long i = 0;; i = i + 1) {
                                                            }
                                                          });
  ASSERT_FALSE(spinning.ok());
  EXPECT_EQ(spinning.status().code(), Status::Code::kInvalidInput);
  EXPECT_NE(spinning.status().message().find("the study file is damaged: reading it did not finish after"),
            std::string::npos)
      << spinning.status().message();
  // Waiting five times its processor share on the clock, it still gives its answer.
  const Result<StudyData> waiting = ReadStudyFileGuarded("w.h5", {milliseconds(200), milliseconds(600000)},
                                                         [](const std::string&) -> Result<StudyData> {
                                                           ::usleep(1000 * 1000);
                                                           return Status::InvalidInput("the answer");
                                                         });
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.status().message(), "the answer");
  const Result<StudyData> stuck = ReadStudyFileGuarded("x.h5", {milliseconds(200), milliseconds(1000)},
                                                       [](const std::string&) -> Result<StudyData> {
                                                         for (;;) ::pause();
                                                       });
  ASSERT_FALSE(stuck.ok());
  EXPECT_EQ(stuck.status().code(), Status::Code::kIoError);
  EXPECT_NE(stuck.status().message().find("x.h5: reading it did not finish within 1.0 s (only 0."), std::string::npos)
      << stuck.status().message();
  EXPECT_EQ(stuck.status().message().find("damaged"), std::string::npos) << stuck.status().message();
}

// Sets the text checksums of rows [first, first + crcs.size()) in a closed study file (a plain
// writer; retried while a reader holds HDF5's file lock).
void SetTextChecksums(const std::string& path, hsize_t first, const std::vector<std::int64_t>& crcs) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    if (!file.valid()) {
      usleep(10000);
      continue;
    }
    h5::Handle dataset(H5Dopen2(file.get(), "trials", H5P_DEFAULT));
    h5::Handle type(H5Tcreate(H5T_COMPOUND, sizeof(std::int64_t)));
    h5::Must(H5Tinsert(type.get(), kTextChecksumColumn, 0, H5T_NATIVE_INT64));
    h5::Handle space(H5Dget_space(dataset.get()));
    const hsize_t count = crcs.size();
    h5::Must(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr));
    h5::Handle memory(H5Screate_simple(1, &count, nullptr));
    h5::Must(H5Dwrite(dataset.get(), type.get(), memory.get(), space.get(), H5P_DEFAULT, crcs.data()));
    return;
  }
  ADD_FAILURE() << "could not open " << path << " for writing";
}

// Reads `path` (rows written by Record()) in this process while another process sets the text
// checksums of rows [first, first + crcs.size()) 0.2 s into the read (a writer's next flush):
// every row must come back whole.
void ExpectEveryRowWhileAWriterSetsChecksums(const std::string& path, int rows, hsize_t first,
                                             const std::vector<std::int64_t>& crcs) {
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    usleep(200000);
    SetTextChecksums(path, first, crcs);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  const Result<StudyData> read = ReadStudyFileInProcess(path);
  int status = 0;
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->trials.size(), static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    const TrialRecord want = Record(i, i % 3 != 0);
    const TrialRecord& got = read->trials[static_cast<size_t>(i)];
    ASSERT_EQ(got.reason, want.reason) << "trial " << i;
    ASSERT_EQ(got.output_tail, want.output_tail) << "trial " << i;
    ASSERT_EQ(got.attrs_json, want.attrs_json) << "trial " << i;
  }
}

// A live writer rewrites rows while readers read: a row whose texts and checksum disagree is read
// again on its own until they agree (the rows around it stand), and called damaged, with its
// number, only when they never do.
TEST(StudyReader, ARowWhoseTextsDisagreeIsReadAgainAloneAndIsDamagedOnlyIfItStaysSo) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  const StudyConfig config = Config(path);
  constexpr int kRows = 600;  // more than one block of the reader's text reads
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (int i = 0; i < kRows; ++i) ASSERT_TRUE((*file)->PutTrial(Record(i, i % 3 != 0)).ok());
  }
  const TrialRecord expected = Record(513, false);
  const std::int64_t crc = TextChecksum(expected.reason, expected.output_tail, expected.attrs_json);
  SetTextChecksums(path, 513, {crc ^ 1});
  const Result<StudyData> damaged = ReadStudyFile(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("the study file is damaged: trial 513: its texts"), std::string::npos)
      << damaged.status().message();
  ExpectEveryRowWhileAWriterSetsChecksums(path, kRows, 513, {crc});  // the row agrees again
}

// Every row disagreeing (a damaged heap, or a writer that rewrote them all): they are read again
// in blocks, not one read per row (which ran past the reader's deadline at 20,000 rows), and the
// verdict counts them; rows that agree again later come back whole.
TEST(StudyReader, ManyRowsThatDisagreeAreReadAgainInBlocksAndCounted) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  constexpr int kRows = 600;
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (int i = 0; i < kRows; ++i) ASSERT_TRUE((*file)->PutTrial(Record(i, i % 3 != 0)).ok());
  }
  std::vector<std::int64_t> right, wrong;
  for (int i = 0; i < kRows; ++i) {
    const TrialRecord r = Record(i, i % 3 != 0);
    right.push_back(TextChecksum(r.reason, r.output_tail, r.attrs_json));
    wrong.push_back(right.back() ^ 1);
  }
  SetTextChecksums(path, 0, wrong);
  const Result<StudyData> damaged = ReadStudyFile(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("the study file is damaged: trial 0 and 599 more: their texts"),
            std::string::npos)
      << damaged.status().message();

  ExpectEveryRowWhileAWriterSetsChecksums(path, kRows, 0, right);  // they agree again
}

TEST(StudyFile, ASecondWriterIsRefusedWithTheHolderNamed) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  Result<std::unique_ptr<StudyFile>> first = StudyFile::Create(path, Config(path));
  ASSERT_TRUE(first.ok());
  for (const Result<std::unique_ptr<StudyFile>>& second :
       {StudyFile::Reopen(path, Config(path)), StudyFile::Create(path, Config(path))}) {
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), Status::Code::kInvalidInput);
    EXPECT_NE(second.status().message().find("in use by cleansweep pid " + std::to_string(::getpid())),
              std::string::npos)
        << second.status().message();
  }
  EXPECT_TRUE((*first)->PutTrial(Record(0, true)).ok());  // the first one is undisturbed
}

// Issue 17: a file from before checkpoints has no /attempts; it reads as none, and a resume gives
// it the table (opening it plainly for that moment) and goes on.
TEST(StudyFile, AFileWithoutAttemptsGainsTheTableOnResume) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->PutTrial(Record(0, true)).ok());
  }
  {
    h5::Handle f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_TRUE(f.valid());
    ASSERT_GE(H5Ldelete(f.get(), "attempts", H5P_DEFAULT), 0);
  }
  Result<StudyData> before = ReadStudyFile(path);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_TRUE(before->attempts.empty());
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, Config(path));
    ASSERT_TRUE(file.ok()) << file.status().message();
    TrialRecord earlier = Record(0, true);
    earlier.state = TrialState::kInterrupted;
    ASSERT_TRUE((*file)->AppendAttempt(earlier).ok());
    ASSERT_TRUE((*file)->PutTrial(Record(1, true)).ok());
  }
  Result<StudyData> after = ReadStudyFile(path);
  ASSERT_TRUE(after.ok()) << after.status().message();
  ASSERT_EQ(after->attempts.size(), 1u);
  EXPECT_EQ(after->attempts[0].state, TrialState::kInterrupted);
  EXPECT_EQ(after->trials.size(), 2u);
}

TEST(StudyFile, ReopenRefusesAnotherSchemaVersion) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  ASSERT_TRUE(StudyFile::Create(path, Config(path)).ok());
  {
    h5::Handle f(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_TRUE(f.valid());
    H5Adelete(f.get(), "schema_version");
    ASSERT_TRUE(h5::WriteAttr(f.get(), "schema_version", 1LL).ok());
  }
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, Config(path));
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("schema 1"), std::string::npos) << file.status().message();
}

TEST(StudyFile, IsNotWorldWritableWhateverTheUmask) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  const mode_t old = ::umask(0);
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
  ::umask(old);
  ASSERT_TRUE(file.ok());
  const auto perms = std::filesystem::status(path).permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::others_write | std::filesystem::perms::group_write),
            std::filesystem::perms::none);
}

TEST(StudyFile, FieldsReadersMustTrustAreFixedWidthInTheRow) {
  // SWMR readers may see a variable-length string half-written; state, host, gpu and text
  // parameters live in the row itself.
  const RowLayout layout = TrialsLayout(Config("s.h5").space, Config("s.h5").study);
  EXPECT_EQ(layout.Find("state")->length, kStateLength);
  EXPECT_EQ(layout.Find("host")->length, kHostLength);
  EXPECT_EQ(layout.Find("gpu")->length, kGpuLength);
  EXPECT_EQ(layout.Find("param_opt")->length, 4u);   // "adam"
  EXPECT_EQ(layout.Find("param_flag")->length, 5u);  // "false"
  EXPECT_EQ(layout.Find("reason")->length, 0u);      // free text stays variable-length

  TempDir dir;
  const std::string path = dir.File("s.h5");
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
  ASSERT_TRUE(file.ok());
  TrialRecord r = Record(0, true);
  r.host = std::string(70, 'h') + "ü";  // longer than the column: cut, never mid-character
  r.state = TrialState::kInterrupted;   // the longest state name
  ASSERT_TRUE((*file)->PutTrial(r).ok());
  file->reset();
  Result<StudyData> study = ReadStudyFile(path);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_EQ(study->trials[0].host, std::string(64, 'h'));
  EXPECT_EQ(study->trials[0].state, TrialState::kInterrupted);
  EXPECT_EQ(study->trials[0].params.at("opt"), ParamValue(std::string("sgd")));
  EXPECT_EQ(study->trials[0].params.at("flag"), ParamValue(true));
}

// Issue 19: each row says when its worker became free for it; issue 18: what it cost. A file
// written before those columns existed reads them as unknown, and a resume goes on writing it
// without them.
TEST(StudyFile, WorkerFreeTimeAndCostAreKeptAndOlderFilesGoOnWithoutThem) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    ASSERT_TRUE(file.ok());
    TrialRecord r = Record(0, true);
    r.worker_free_time = r.start_time - 0.004;
    r.cpu_seconds = 1.25;
    r.gpu_seconds = 2.5;
    r.energy_j = 300.75;
    ASSERT_TRUE((*file)->PutTrial(r).ok());
    ASSERT_TRUE((*file)->PutTrial(Record(1, false)).ok());  // a worker's first trial: NaN
  }
  Result<StudyData> study = ReadStudyFile(path);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_NEAR(study->trials[0].start_time - study->trials[0].worker_free_time, 0.004, 1e-9);
  EXPECT_TRUE(std::isnan(study->trials[1].worker_free_time));
  EXPECT_EQ(study->trials[0].cpu_seconds, 1.25);
  EXPECT_EQ(study->trials[0].gpu_seconds, 2.5);
  EXPECT_EQ(study->trials[0].energy_j, 300.75);
  EXPECT_TRUE(std::isnan(study->trials[1].energy_j)) << "unknown stays unknown";

  // six_trials.h5 was written by cleansweep before the column existed.
  const std::string old = dir.File("old.h5");
  std::filesystem::copy_file(std::string(CLEANSWEEP_SOURCE_DIR) + "/tests/fuzz/corpus/study_reader/six_trials.h5", old);
  Result<StudyData> before = ReadStudyFile(old);
  ASSERT_TRUE(before.ok()) << before.status().message();
  ASSERT_FALSE(before->trials.empty());
  for (const TrialRecord& r : before->trials) {
    EXPECT_TRUE(std::isnan(r.worker_free_time)) << r.number;
    EXPECT_TRUE(std::isnan(r.cpu_seconds) && std::isnan(r.gpu_seconds) && std::isnan(r.energy_j)) << r.number;
  }
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(old, before->config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    TrialRecord next = before->trials.back();
    next.number = static_cast<std::int64_t>(before->trials.size());
    next.worker_free_time = next.start_time - 1;
    next.cpu_seconds = 3;
    ASSERT_TRUE((*file)->PutTrial(next).ok());
    ASSERT_TRUE((*file)->Flush().ok());
  }
  Result<StudyData> after = ReadStudyFile(old);
  ASSERT_TRUE(after.ok()) << after.status().message();
  ASSERT_EQ(after->trials.size(), before->trials.size() + 1);
  EXPECT_EQ(after->trials.back().number, static_cast<std::int64_t>(before->trials.size()));
  EXPECT_TRUE(std::isnan(after->trials.back().worker_free_time)) << "an old file has no place for it";
  EXPECT_TRUE(std::isnan(after->trials.back().cpu_seconds)) << "an old file has no place for it";
}

// Issue 16: a gang trial's size, workers and largest process; older files read as one worker.
TEST(StudyFile, AGangsWorkersAndLargestProcessAreKeptAndOlderFilesReadAsOneWorker) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    ASSERT_TRUE(file.ok());
    TrialRecord gang = Record(0, true);
    gang.gpus = 8;
    gang.workers = "1-4,9-12";
    gang.peak_rss_kb = 8000;
    gang.peak_rss_max_kb = 1500;
    gang.gpu_mem_peak_mb = 4000;
    gang.gpu_mem_peak_max_mb = 600;
    ASSERT_TRUE((*file)->PutTrial(gang).ok());
    ASSERT_TRUE((*file)->PutTrial(Record(1, true)).ok());
  }
  Result<StudyData> study = ReadStudyFile(path);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_EQ(study->trials[0].gpus, 8);
  EXPECT_EQ(study->trials[0].workers, "1-4,9-12");
  EXPECT_EQ(study->trials[0].peak_rss_max_kb, 1500);
  EXPECT_EQ(study->trials[0].gpu_mem_peak_max_mb, 600);
  EXPECT_EQ(study->trials[1].gpus, 1);
  EXPECT_EQ(study->trials[1].workers, "");
  EXPECT_EQ(TrialsLayout(Config(path).space, Config(path).study).Find("workers")->length, kWorkersLength);

  const std::string old = dir.File("old.h5");  // written before gangs
  std::filesystem::copy_file(std::string(CLEANSWEEP_SOURCE_DIR) + "/tests/fuzz/corpus/study_reader/six_trials.h5", old);
  Result<StudyData> before = ReadStudyFile(old);
  ASSERT_TRUE(before.ok()) << before.status().message();
  for (const TrialRecord& r : before->trials) {
    EXPECT_EQ(r.gpus, 1);
    EXPECT_EQ(r.peak_rss_max_kb, r.peak_rss_kb);
  }
  Result<std::unique_ptr<StudyFile>> reopened = StudyFile::Reopen(old, before->config);
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  TrialRecord next = before->trials.back();
  next.number = static_cast<std::int64_t>(before->trials.size());
  next.gpus = 2;  // no place for it in an old file: the row is written without it
  ASSERT_TRUE((*reopened)->PutTrial(next).ok());
  ASSERT_TRUE((*reopened)->Flush().ok());
}

// Issue 18: why a run ended early (study.stop_when) is a root attribute that the SWMR writer
// rewrites in place: readers see it, a resume clears it, an older file gains it on resume.
TEST(StudyFile, TheStopReasonIsRewrittenInPlaceAndOlderFilesGainIt) {
  TempDir dir;
  const std::string path = dir.File("s.h5");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, Config(path));
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->PutTrial(Record(0, true)).ok());
    ASSERT_TRUE((*file)->RecordStopReason(std::string(3000, 'r') + "é").ok());
    ASSERT_TRUE((*file)->Flush().ok());
    Result<StudyData> live = ReadStudyFile(path);  // while the writer holds it
    ASSERT_TRUE(live.ok()) << live.status().message();
    EXPECT_EQ(live->stop_reason, std::string(1023, 'r')) << "cut to the attribute's size";
    ASSERT_TRUE((*file)->RecordStopReason("no improvement in the last 5 trials").ok());
  }
  Result<StudyData> study = ReadStudyFile(path);
  ASSERT_TRUE(study.ok()) << study.status().message();
  EXPECT_EQ(study->stop_reason, "no improvement in the last 5 trials");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(path, study->config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE((*file)->RecordStopReason("").ok());
  }
  EXPECT_EQ(ReadStudyFile(path)->stop_reason, "");

  const std::string old = dir.File("old.h5");  // written before the attribute existed
  std::filesystem::copy_file(std::string(CLEANSWEEP_SOURCE_DIR) + "/tests/fuzz/corpus/study_reader/six_trials.h5", old);
  Result<StudyData> before = ReadStudyFile(old);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(before->stop_reason, "");
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Reopen(old, before->config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE((*file)->RecordStopReason("the target was reached").ok());
  }
  EXPECT_EQ(ReadStudyFile(old)->stop_reason, "the target was reached");
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

// Issue 18: a study of several metrics stores each one's value and whether the trial is on the
// Pareto front; both read back, and a rewritten row changes the flag in place.
TEST(StudyFile, SeveralMetricsHaveAColumnEachAndAParetoFlag) {
  TempDir dir;
  const std::string path = dir.File("mo.h5");
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: mo, metrics: [{name: acc, direction: maximize}, {name: latency_ms, direction: minimize}, "
      "{name: energy_j, direction: minimize}], storage: " +
          path + "}\nsampler: {kind: nsga2}\ntrial: {command: [p]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n",
      "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  {
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(path, *config);
    ASSERT_TRUE(file.ok()) << file.status().message();
    TrialRecord r;
    r.number = 0;
    r.state = TrialState::kComplete;
    r.value = 0.9;
    r.values = {0.9, 12.5, 300};
    r.pareto = true;
    r.params = {{"x", 0.5}};
    ASSERT_TRUE((*file)->PutTrial(r).ok());
    TrialRecord pruned = r;
    pruned.number = 1;
    pruned.state = TrialState::kPruned;
    pruned.values.clear();
    pruned.pareto = false;
    ASSERT_TRUE((*file)->PutTrial(pruned).ok());
    r.pareto = false;  // a later trial dominated it
    ASSERT_TRUE((*file)->PutTrial(r).ok());
    ASSERT_TRUE((*file)->AppendIntermediate({0, 0, 0.5, 1.0, {0.5, 20}}).ok());
  }
  Result<StudyData> read = ReadStudyFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->trials.size(), 2u);
  EXPECT_EQ(read->trials[0].values, (std::vector<double>{0.9, 12.5, 300}));
  EXPECT_FALSE(read->trials[0].pareto);
  EXPECT_TRUE(read->trials[1].values.empty()) << "only COMPLETE trials have every metric's value";
  ASSERT_EQ(read->intermediate.size(), 1u);
  // Only the metrics the trial reports have intermediate columns (energy_j is recorded, not reported).
  EXPECT_EQ(read->intermediate[0].values, (std::vector<double>{0.5, 20}));
  h5::QuietErrors();
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
  EXPECT_EQ(*h5::ReadStringAttr(file.get(), "metrics"),
            R"([{"direction":"maximize","name":"acc"},{"direction":"minimize","name":"latency_ms"},)"
            R"({"direction":"minimize","name":"energy_j"}])");
  h5::Handle trials(H5Dopen2(file.get(), "trials", H5P_DEFAULT));
  h5::Handle type(H5Dget_type(trials.get()));
  for (const char* column : {"value_acc", "value_latency_ms", "value_energy_j", "pareto"}) {
    EXPECT_GE(H5Tget_member_index(type.get(), column), 0) << column;
  }
}

TEST(StudyDifferences, AMultiMetricStudyKeepsItsListOfMetrics) {
  const auto config = [](const std::string& metrics) {
    Result<StudyConfig> c = LoadConfigText("study: {name: mo, metrics: " + metrics +
                                               "}\nsampler: {kind: nsga2}\ntrial: {command: [p]}\nspace:\n"
                                               "  x: {type: float, low: 0.0, high: 1.0}\n",
                                           "mo.yaml");
    EXPECT_TRUE(c.ok()) << c.status().message();
    return *c;
  };
  const StudyConfig stored = config("[{name: acc, direction: maximize}, {name: ms, direction: minimize}]");
  bool breaking = false;
  std::vector<std::string> diff = StudyDifferences(
      stored, config("[{name: acc, direction: maximize}, {name: ms, direction: maximize}]"), &breaking);
  EXPECT_EQ(diff, (std::vector<std::string>{"study.metrics.ms: was minimize, now maximize"}));
  EXPECT_FALSE(breaking) << "a direction is no column";
  diff = StudyDifferences(stored, config("[{name: acc, direction: maximize}, {name: energy_j, direction: minimize}]"),
                          &breaking);
  EXPECT_EQ(diff, (std::vector<std::string>{"study.metrics: was [acc, ms], now [acc, energy_j]"}));
  EXPECT_TRUE(breaking) << "value_<metric> columns would no longer match";
}

}  // namespace
}  // namespace cleansweep
