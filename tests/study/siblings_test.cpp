#include "study/siblings.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>

#include "study/study_file.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::TempDir;

StudyConfig Shard(const TempDir& dir, const std::string& shard, const std::vector<std::string>& sets = {}) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: s, n_trials: 40, storage: " + dir.File("s.h5") + ", shard: " + shard +
          "}\nsampler: {kind: tpe, seed: 9}\ntrial: {command: [p]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n",
      "s.yaml", sets);
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

TrialRecord Trial(std::int64_t number, TrialState state, double x) {
  TrialRecord r;
  r.number = number;
  r.state = state;
  r.params = {{"x", ParamValue(x)}};
  if (state == TrialState::kComplete) r.value = x;
  r.start_time = 100 + static_cast<double>(number);
  r.end_time = r.start_time + 1;
  return r;
}

void WriteStudy(const StudyConfig& config, const std::vector<TrialRecord>& trials) {
  Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(config.study.storage, config);
  ASSERT_TRUE(file.ok()) << file.status().message();
  for (const TrialRecord& r : trials) ASSERT_TRUE((*file)->PutTrial(r).ok());
}

// Sets `path`'s modification time to `seconds` ago.
void Age(const std::string& path, int seconds) {
  const timespec times[2] = {{::time(nullptr) - seconds, 0}, {::time(nullptr) - seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// A shard reads its siblings and only them: a damaged file, one still being created and one of
// another sweep are each skipped with one warning, which is not repeated while nothing changes.
TEST(Siblings, AShardReadsItsSiblingsAndSkipsWhatItCannotTrustWithOneWarning) {
  TempDir dir;
  const StudyConfig own = Shard(dir, "0/3");
  WriteStudy(own, {Trial(0, TrialState::kComplete, 0.5)});
  WriteStudy(Shard(dir, "1/3"), {Trial(0, TrialState::kComplete, 0.1), Trial(1, TrialState::kRunning, 0.2)});
  std::ofstream(dir.File("s-shard-2-of-3.h5")) << "not an HDF5 file at all";
  std::ofstream(dir.File("s-shard-5.h5")).flush();  // a joiner's claim
  WriteStudy(Shard(dir, "joined-6", {"study.n_trials=41"}), {Trial(0, TrialState::kComplete, 0.3)});
  std::ofstream(dir.File("t-shard-1-of-3.h5")) << "another study's name";
  for (const char* name : {"s-shard-1-of-3.h5", "s-shard-2-of-3.h5", "s-shard-5.h5", "s-shard-6.h5"}) {
    Age(dir.File(name), 3600);  // settled: read again only when changed
  }
  SiblingReader reader(own);
  SiblingSource::Scan scan = reader.Read();
  EXPECT_TRUE(scan.changed);
  ASSERT_EQ(reader.files().size(), 1u);
  const SiblingFile& sibling = reader.files().begin()->second;
  EXPECT_EQ(sibling.path, dir.File("s-shard-1-of-3.h5"));
  EXPECT_EQ(sibling.shard, "1/3");
  EXPECT_FALSE(sibling.live);  // its writer closed it
  ASSERT_EQ(sibling.trials.size(), 2u);
  EXPECT_EQ(sibling.trials[1].state, TrialState::kRunning);
  std::string warnings;
  for (const std::string& w : scan.warnings) warnings += w + "\n";
  EXPECT_EQ(scan.warnings.size(), 3u) << warnings;
  EXPECT_NE(warnings.find(dir.File("s-shard-2-of-3.h5") + ": "), std::string::npos) << warnings;
  EXPECT_NE(warnings.find(dir.File("s-shard-5.h5") + ": still being created"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find(dir.File("s-shard-6.h5") + ": not a part of this sweep (study.n_trials is 41"),
            std::string::npos)
      << warnings;
  const SiblingSource::Scan again = reader.Read();
  EXPECT_FALSE(again.changed);
  EXPECT_TRUE(again.warnings.empty());
}

// While its coordinator runs (holds the study's lock), a sibling is live: its RUNNING rows run.
// It is read again when it wrote, and while its last write is recent (a time kept in whole
// seconds could hide a second write); a live sibling that has settled costs a stat().
TEST(Siblings, ALiveSiblingIsReadAgainWhenItWroteOrWroteRecently) {
  TempDir dir;
  const StudyConfig own = Shard(dir, "0/2");
  const StudyConfig other = Shard(dir, "1/2");
  Result<std::unique_ptr<StudyFile>> open = StudyFile::Create(other.study.storage, other);
  ASSERT_TRUE(open.ok()) << open.status().message();
  ASSERT_TRUE((*open)->PutTrial(Trial(0, TrialState::kRunning, 0.4)).ok());
  ASSERT_TRUE((*open)->Flush().ok());
  const auto age = [&](int seconds) { Age(other.study.storage, seconds); };
  age(3600);
  SiblingReader reader(own);
  EXPECT_TRUE(reader.Read().changed);
  ASSERT_EQ(reader.files().size(), 1u);
  EXPECT_TRUE(reader.files().begin()->second.live);
  EXPECT_EQ(reader.files().begin()->second.trials[0].state, TrialState::kRunning);
  EXPECT_FALSE(reader.Read().changed);  // live, and nothing written for an hour
  ASSERT_TRUE((*open)->PutTrial(Trial(0, TrialState::kComplete, 0.4)).ok());
  ASSERT_TRUE((*open)->PutTrial(Trial(1, TrialState::kComplete, 0.6)).ok());
  ASSERT_TRUE((*open)->Flush().ok());
  EXPECT_TRUE(reader.Read().changed);
  ASSERT_EQ(reader.files().begin()->second.trials.size(), 2u);
  EXPECT_TRUE(reader.Read().changed);  // written a moment ago: read once more
  age(60);
  EXPECT_TRUE(reader.Read().changed);  // a new time
  EXPECT_FALSE(reader.Read().changed);
  open->reset();  // its run ended: no longer live
  EXPECT_TRUE(reader.Read().changed);
  EXPECT_FALSE(reader.files().begin()->second.live);
}

// run --join: the next index follows every file of the sweep, and an exclusive create decides
// between two joiners that race for it.
TEST(Siblings, JoinersTakeTheNextFreeIndexAndNeverTheSameOne) {
  TempDir dir;
  for (const char* shard : {"0/3", "1/3", "2/3"}) WriteStudy(Shard(dir, shard), {});
  EXPECT_EQ(NextJoinIndex(dir.File("s.h5")), 3);
  const std::string path = dir.File("s-shard-3.h5");
  Result<bool> first = ClaimStudyFile(path);
  Result<bool> second = ClaimStudyFile(path);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*second);
  EXPECT_EQ(NextJoinIndex(dir.File("s.h5")), 4);
  // The winner fills its claim; a file that is not an empty claim is never overwritten.
  WriteStudy(Shard(dir, "joined-3"), {Trial(0, TrialState::kComplete, 0.2)});
  EXPECT_FALSE(StudyFile::Create(path, Shard(dir, "joined-3")).ok());
  Result<StudyData> data = ReadStudyFile(path);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->trials.size(), 1u);
  EXPECT_TRUE(data->config.study.shard.joined);
}

// study.warm_start: trials outside this space are left out and counted; another objective is refused.
TEST(Siblings, AWarmStartKeepsTheTrialsThatFitAndSaysHowManyItLeftOut) {
  TempDir dir;
  Result<StudyConfig> earlier = LoadConfigText(
      "study: {name: old, storage: " + dir.File("old.h5") +
          "}\nsampler: {kind: random}\ntrial: {command: [p]}\nspace:\n  x: {type: float, low: 0.0, high: 2.0}\n",
      "old.yaml");
  ASSERT_TRUE(earlier.ok());
  WriteStudy(*earlier, {Trial(0, TrialState::kComplete, 0.5), Trial(1, TrialState::kComplete, 1.5),
                        Trial(2, TrialState::kFail, 0.7), Trial(3, TrialState::kRunning, 0.2)});
  const StudyConfig now = Shard(dir, "0/1", {"study.warm_start=[" + dir.File("old.h5") + "]"});
  Result<std::vector<WarmStartFile>> warm = ReadWarmStart(now);
  ASSERT_TRUE(warm.ok()) << warm.status().message();
  ASSERT_EQ(warm->size(), 1u);
  EXPECT_EQ((*warm)[0].read, 3);  // the RUNNING row is no finished trial
  EXPECT_EQ((*warm)[0].used.size(), 2u);
  EXPECT_EQ((*warm)[0].Summary(), dir.File("old.h5") + ": 2 of 3 trials (1 left out: x outside this space)");
  EXPECT_EQ(MisfitOf(now, {}), "x missing");
  EXPECT_EQ(MisfitOf(now, {{"x", ParamValue(0.5)}, {"y", ParamValue(1.0)}}), "extra parameter y");
  const StudyConfig maximizing =
      Shard(dir, "0/1", {"study.direction=maximize", "study.warm_start=" + dir.File("old.h5")});
  Result<std::vector<WarmStartFile>> refused = ReadWarmStart(maximizing);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("its values mean nothing here"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace cleansweep
