// Coordinator cost in isolation: the real coordinator, sampler and study file, with workers on
// threads behind the in-process transport and a launcher whose trials end at once with a value.
// What it measures is the coordinator's own cost per finished trial (sampling, bookkeeping and
// making both of each trial's rows durable), as finished trials per second, chunk by chunk, so
// that any cost growing with the study's size shows as a falling curve.
//   coordinator_bench [--trials 100000] [--workers 4] [--chunk 1000] [--store file|memory] [--sampler random]
//   coordinator_bench --siblings 16 --trials 1000   # what reading 15 live siblings costs a shard
#include <fcntl.h>
#include <sys/stat.h>
#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_study.hpp"
#include "coordinator/coordinator.hpp"
#include "study/siblings.hpp"
#include "study/study_file.hpp"
#include "tests/support/memory_study_store.hpp"
#include "transport/in_process_transport.hpp"
#include "util/random.hpp"
#include "worker/worker.hpp"

namespace cleansweep {
namespace {

// A trial that is over as soon as it is looked at.
class InstantTrial : public TrialProcess {
 public:
  explicit InstantTrial(double value) {
    outcome_.state = TrialState::kComplete;
    outcome_.value = value;
    outcome_.exit_code = 0;
  }
  void Poll(Millis, std::vector<StepValue>*) override {}
  bool Finished() const override { return true; }
  void Stop(TrialState, const std::string&) override {}
  void Kill(TrialState, const std::string&) override {}
  void RequestPrune(const std::string&, Millis) override {}
  const TrialOutcome& Outcome() const override { return outcome_; }

 private:
  TrialOutcome outcome_;
};

class InstantLauncher : public Launcher {
 public:
  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override {
    return std::unique_ptr<TrialProcess>(std::make_unique<InstantTrial>(static_cast<double>(spec.argv.size())));
  }
};

// Passes rows on and notes when every `chunk`-th trial finished.
class ChunkClock : public StudyStore {
 public:
  ChunkClock(std::unique_ptr<StudyStore> inner, std::int64_t chunk) : inner_(std::move(inner)), chunk_(chunk) {
    marks_.push_back(std::chrono::steady_clock::now());
  }
  Status PutTrial(const TrialRecord& record) override {
    CS_RETURN_IF_ERROR(inner_->PutTrial(record));
    if (record.state != TrialState::kRunning && ++finished_ % chunk_ == 0) {
      marks_.push_back(std::chrono::steady_clock::now());
    }
    return Status::Ok();
  }
  Status AppendIntermediate(const IntermediateValue& value) override { return inner_->AppendIntermediate(value); }
  Status AppendAttempt(const TrialRecord& attempt) override { return inner_->AppendAttempt(attempt); }
  Status AppendTrialParam(const TrialParamRow& row) override { return inner_->AppendTrialParam(row); }
  void DeferFlush(bool defer) override { inner_->DeferFlush(defer); }
  Status Flush() override { return inner_->Flush(); }
  static std::vector<std::chrono::steady_clock::time_point> marks_;

 private:
  std::unique_ptr<StudyStore> inner_;
  std::int64_t chunk_;
  std::int64_t finished_ = 0;
};
std::vector<std::chrono::steady_clock::time_point> ChunkClock::marks_;

struct Run {
  Result<RunSummary> summary = Status::RuntimeError("not run");
  double seconds = 0;
};

// One coordinator run over `workers` threads; `siblings` (or null) is what it shares.
Run RunCoordinator(const StudyConfig& config, int workers, const std::string& store, std::int64_t chunk,
                   SiblingSource* siblings, const std::filesystem::path& dir) {
  ChunkClock::marks_.clear();
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
  InProcessHub hub(workers + 1);
  InProcessTransport coordinator_transport(&hub, 0);
  std::vector<std::unique_ptr<InProcessTransport>> transports;
  std::vector<std::unique_ptr<InstantLauncher>> launchers;
  std::vector<std::thread> threads;
  for (int rank = 1; rank <= workers; ++rank) {
    transports.push_back(std::make_unique<InProcessTransport>(&hub, rank));
    launchers.push_back(std::make_unique<InstantLauncher>());
    WorkerIdentity id;
    id.host = "bench";
    threads.emplace_back([t = transports.back().get(), l = launchers.back().get(), id] {
      Worker worker(t, l, id);
      (void)worker.Run();
    });
  }
  std::FILE* sink = std::tmpfile();
  Progress progress(sink, false, config);
  const SystemClock clock;
  Coordinator coordinator(config, &coordinator_transport, sampler->get(), &clock, &progress);
  if (siblings) coordinator.Share(siblings);
  const auto t0 = std::chrono::steady_clock::now();
  Run run;
  run.summary = coordinator.Run(
      [&]() -> Result<std::unique_ptr<StudyStore>> {
        std::unique_ptr<StudyStore> inner;
        if (store == "file") {
          Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(config.study.storage, config);
          if (!file.ok()) return file.status();
          inner = std::move(*file);
        } else {
          inner = std::make_unique<testing::MemoryStudyStore>();
        }
        return std::unique_ptr<StudyStore>(std::make_unique<ChunkClock>(std::move(inner), chunk));
      },
      (dir / "bench.trials").string());
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::thread& t : threads) t.join();
  std::fclose(sink);
  return run;
}

StudyConfig BenchConfig(std::int64_t trials, const std::filesystem::path& dir, const std::string& sampler,
                        const std::vector<std::string>& sets) {
  Result<StudyConfig> config =
      LoadConfigText(bench::BenchStudyYaml("bench", "maximize", trials, (dir / "bench.h5").string(),
                                           "{kind: " + sampler + ", seed: 1}"),
                     "bench", sets);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    std::exit(2);
  }
  return *config;
}

// `count` finished trials of the bench study's space, as a sibling shard wrote them.
std::vector<TrialRecord> SiblingTrials(std::int64_t count, std::uint64_t seed) {
  static const char* const kOptimizers[] = {"sgd", "adam", "adamw"};
  SplitMix64 rng(seed);
  std::vector<TrialRecord> out;
  for (std::int64_t i = 0; i < count; ++i) {
    TrialRecord r;
    r.number = i;
    r.state = TrialState::kComplete;
    r.params = {{"lr", ParamValue(std::pow(10.0, -5 + 5 * rng.Uniform()))},
                {"layers", ParamValue(static_cast<std::int64_t>(1 + rng.Below(8)))},
                {"optimizer", ParamValue(std::string(kOptimizers[rng.Below(3)]))},
                {"dropout", ParamValue(0.5 * rng.Uniform())}};
    r.value = rng.Uniform();
    r.start_time = 1.7e9 + static_cast<double>(i);
    r.end_time = r.start_time + 0.5;
    out.push_back(std::move(r));
  }
  return out;
}

// The siblings as a sweep changes them: before each read, `changing` of them (in turn) wrote since
// the last (a new modification time an hour ago, so that none is read again for being recent).
class ChangingSiblings : public SiblingSource {
 public:
  ChangingSiblings(const StudyConfig& own, std::vector<std::string> paths, int changing)
      : reader_(own), paths_(std::move(paths)), changing_(changing) {
    for (const std::string& path : paths_) SetTime(path);
  }
  Scan Read() override {
    for (int i = 0; i < changing_; ++i) SetTime(paths_[next_++ % paths_.size()]);
    return reader_.Read();
  }
  const std::map<std::string, SiblingFile>& files() const override { return reader_.files(); }

 private:
  void SetTime(const std::string& path) {
    const timespec times[2] = {{base_ + ++tick_, 0}, {base_ + tick_, 0}};
    ::utimensat(AT_FDCWD, path.c_str(), times, 0);
  }
  SiblingReader reader_;
  std::vector<std::string> paths_;
  int changing_;
  size_t next_ = 0;
  time_t base_ = ::time(nullptr) - 3600, tick_ = 0;
};

// --siblings N: shard 0/N of a sweep whose N - 1 other shards hold --trials finished trials each
// in real study files, all live (each one open, its lock held, as while its coordinator runs).
// The same shard runs alone, then sharing (its first read: RunSummary.share_ms; the slower rate of
// trials is what a sampler with N times the history costs); then reads as a sweep makes them, with
// all, one or none of the siblings changed since the last.
int SiblingsBench(std::int64_t trials, int workers, int shards, const std::filesystem::path& dir) {
  const std::string sets_shard = "study.shard=0/" + std::to_string(shards);
  const StudyConfig own = BenchConfig(trials * shards, dir, "tpe", {sets_shard});
  std::vector<std::unique_ptr<StudyFile>> writers;
  for (int k = 1; k < shards; ++k) {
    const StudyConfig other =
        BenchConfig(trials * shards, dir, "tpe", {"study.shard=" + std::to_string(k) + "/" + std::to_string(shards)});
    Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(other.study.storage, other);  // holds its lock
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", file.status().message().c_str());
      return 1;
    }
    (*file)->DeferFlush(true);
    for (const TrialRecord& r : SiblingTrials(trials, static_cast<std::uint64_t>(k))) {
      if (Status s = (*file)->PutTrial(r); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
      }
    }
    if (Status s = (*file)->Flush(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    writers.push_back(std::move(*file));
  }
  const Run alone = RunCoordinator(BenchConfig(trials * shards, dir, "tpe", {sets_shard, "study.share_every=0"}),
                                   workers, "file", trials, nullptr, dir);
  if (!alone.summary.ok()) {
    std::fprintf(stderr, "%s\n", alone.summary.status().message().c_str());
    return 1;
  }
  std::vector<std::string> paths;
  for (int k = 1; k < shards; ++k) {
    paths.push_back(
        BenchConfig(trials * shards, dir, "tpe", {"study.shard=" + std::to_string(k) + "/" + std::to_string(shards)})
            .study.storage);
  }
  std::filesystem::remove(own.study.storage);  // the run alone wrote it
  ChangingSiblings siblings(own, paths, 0);
  const Run sharing = RunCoordinator(own, workers, "file", trials, &siblings, dir);
  if (!sharing.summary.ok()) {
    std::fprintf(stderr, "%s\n", sharing.summary.status().message().c_str());
    return 1;
  }
  std::printf(
      "# shard 0/%d of a sweep of %d shards x %lld trials: the %d others live, %lld finished trials each;\n"
      "# the shard runs %lld trials with %d workers and trials that end at once, alone and sharing\n",
      shards, shards, static_cast<long long>(trials), shards - 1, static_cast<long long>(trials),
      static_cast<long long>(alone.summary->finished), workers);
  std::printf("| | trials/s | the coordinator's first read of the siblings |\n|---|---|---|\n");
  std::printf("| alone | %.0f | - |\n", static_cast<double>(alone.summary->finished) / alone.seconds);
  std::printf("| sharing | %.0f | %.0f ms |\n", static_cast<double>(sharing.summary->finished) / sharing.seconds,
              sharing.summary->share_ms.front());
  // The reads after the first, as a sweep goes on: so many siblings wrote since the last. Timed
  // here directly: at share_every 30 s, a run of trials that end at once makes one read only.
  std::printf(
      "\n| siblings changed since the last read | reads | median read | slowest read | per sibling read again |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const int changing : {shards - 1, 1, 0}) {
    ChangingSiblings reads(own, paths, changing);
    reads.Read();  // the first: every sibling
    std::vector<double> ms;
    for (int i = 0; i < 20; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      reads.Read();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("| %d | %zu | %.2f ms | %.2f ms | %s |\n", changing, ms.size(), median, ms.back(),
                changing ? (std::to_string(static_cast<int>(median / changing)) + " ms").c_str() : "-");
  }
  return 0;
}

int Main(int argc, char** argv) {
  std::int64_t trials = 100'000, chunk = 1000;
  int workers = 4, siblings = 0;
  std::string store = "file", sampler = "random";
  CLI::App app{"The coordinator's cost per finished trial, chunk by chunk"};
  app.add_option("--trials", trials)->check(CLI::PositiveNumber);
  app.add_option("--workers", workers)->check(CLI::Range(1, 1024));
  app.add_option("--chunk", chunk)->check(CLI::PositiveNumber);
  app.add_option("--store", store)->check(CLI::IsMember({"file", "memory"}));
  app.add_option("--sampler", sampler);
  app.add_option("--siblings", siblings, "shard 0 of this many shards, --trials each, reading the others")
      ->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cs-coord-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  if (siblings > 0) {
    const int rc = SiblingsBench(trials, workers, siblings, dir);
    std::filesystem::remove_all(dir);
    return rc;
  }
  const StudyConfig config = BenchConfig(trials, dir, sampler, {});
  const Run run = RunCoordinator(config, workers, store, chunk, nullptr, dir);
  std::filesystem::remove_all(dir);
  if (!run.summary.ok()) {
    std::fprintf(stderr, "%s\n", run.summary.status().message().c_str());
    return 1;
  }
  const auto& marks = ChunkClock::marks_;
  std::printf("# %lld trials, %d workers, store %s, sampler %s: finished trials per second, per chunk of %lld\n",
              static_cast<long long>(run.summary->finished), workers, store.c_str(), sampler.c_str(),
              static_cast<long long>(chunk));
  std::printf("trials_done\trate_per_s\n");
  for (size_t i = 1; i < marks.size(); ++i) {
    const double seconds = std::chrono::duration<double>(marks[i] - marks[i - 1]).count();
    std::printf("%lld\t%.0f\n", static_cast<long long>(i) * static_cast<long long>(chunk),
                static_cast<double>(chunk) / seconds);
  }
  const double total = std::chrono::duration<double>(marks.back() - marks.front()).count();
  std::printf("# overall %.0f trials/s over %.1f s\n", static_cast<double>(run.summary->finished) / total, total);
  return 0;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) { return cleansweep::Main(argc, argv); }
