// Coordinator cost in isolation: the real coordinator, sampler and study file, with workers on
// threads behind the in-process transport and a launcher whose trials end at once with a value.
// What it measures is the coordinator's own cost per finished trial (sampling, bookkeeping and
// making both of each trial's rows durable), as finished trials per second, chunk by chunk, so
// that any cost growing with the study's size shows as a falling curve.
//   coordinator_bench [--trials 100000] [--workers 4] [--chunk 1000] [--store file|memory]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_study.hpp"
#include "coordinator/coordinator.hpp"
#include "study/study_file.hpp"
#include "tests/support/memory_study_store.hpp"
#include "transport/in_process_transport.hpp"
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
  void DeferFlush(bool defer) override { inner_->DeferFlush(defer); }
  Status Flush() override { return inner_->Flush(); }
  static std::vector<std::chrono::steady_clock::time_point> marks_;

 private:
  std::unique_ptr<StudyStore> inner_;
  std::int64_t chunk_;
  std::int64_t finished_ = 0;
};
std::vector<std::chrono::steady_clock::time_point> ChunkClock::marks_;

int Main(int argc, char** argv) {
  std::int64_t trials = 100'000, chunk = 1000;
  int workers = 4;
  std::string store = "file";
  CLI::App app{"The coordinator's cost per finished trial, chunk by chunk"};
  app.add_option("--trials", trials)->check(CLI::PositiveNumber);
  app.add_option("--workers", workers)->check(CLI::Range(1, 1024));
  app.add_option("--chunk", chunk)->check(CLI::PositiveNumber);
  app.add_option("--store", store)->check(CLI::IsMember({"file", "memory"}));
  CLI11_PARSE(app, argc, argv);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cs-coord-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Result<StudyConfig> config = LoadConfigText(
      bench::BenchStudyYaml("bench", "maximize", trials, (dir / "bench.h5").string(), "{kind: random, seed: 1}"),
      "bench");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
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
  Progress progress(sink, false, *config);
  const SystemClock clock;
  Coordinator coordinator(*config, &coordinator_transport, sampler->get(), &clock, &progress);
  Result<RunSummary> summary = coordinator.Run(
      [&]() -> Result<std::unique_ptr<StudyStore>> {
        std::unique_ptr<StudyStore> inner;
        if (store == "file") {
          Result<std::unique_ptr<StudyFile>> file = StudyFile::Create(config->study.storage, *config);
          if (!file.ok()) return file.status();
          inner = std::move(*file);
        } else {
          inner = std::make_unique<testing::MemoryStudyStore>();
        }
        return std::unique_ptr<StudyStore>(std::make_unique<ChunkClock>(std::move(inner), chunk));
      },
      (dir / "bench.trials").string());
  for (std::thread& t : threads) t.join();
  std::fclose(sink);
  std::filesystem::remove_all(dir);
  if (!summary.ok()) {
    std::fprintf(stderr, "%s\n", summary.status().message().c_str());
    return 1;
  }
  const auto& marks = ChunkClock::marks_;
  std::printf("# %lld trials, %d workers, store %s: finished trials per second, per chunk of %lld\n",
              static_cast<long long>(summary->finished), workers, store.c_str(), static_cast<long long>(chunk));
  std::printf("trials_done\trate_per_s\n");
  for (size_t i = 1; i < marks.size(); ++i) {
    const double seconds = std::chrono::duration<double>(marks[i] - marks[i - 1]).count();
    std::printf("%lld\t%.0f\n", static_cast<long long>(i) * static_cast<long long>(chunk),
                static_cast<double>(chunk) / seconds);
  }
  const double total = std::chrono::duration<double>(marks.back() - marks.front()).count();
  std::printf("# overall %.0f trials/s over %.1f s\n", static_cast<double>(summary->finished) / total, total);
  return 0;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) { return cleansweep::Main(argc, argv); }
