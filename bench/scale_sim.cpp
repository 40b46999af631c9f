// Scale on paper: the real Coordinator (scheduling loop, sampler, progress, in-memory store) driven
// by a simulated transport on a virtual clock, with thousands of simulated workers. Each trial
// takes a duration drawn from a heavy-tailed distribution (log-normal, sigma 1.5, mean 60 s by
// default); the coordinator's own work is charged to the virtual clock at the CPU time it really
// takes on this machine, so a coordinator that cannot keep up shows as idle workers.
//   scale_sim --workers 4096 --sampler random|tpe [--trials-per-worker 4] [--mean 60] [--sigma 1.5]
//             [--batch-asks false] [--queue auto|0|1]
// Utilisation = time workers spent running trials / time they were available, over the window
// from the first assignment to the last one (after it the sweep drains: idle workers there are the
// end of the sweep, not the coordinator's doing).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_study.hpp"
#include "bench/sim_clock.hpp"
#include "coordinator/coordinator.hpp"
#include "study/study_store.hpp"
#include "tests/support/memory_study_store.hpp"
#include "util/allocator.hpp"

namespace cleansweep {
namespace {

using bench::VirtualClock;

// Every worker rank at once. Messages the coordinator sends arrive at once; a trial's result
// arrives `latency` after its simulated end. A trial handed to a busy worker (workers.queue)
// starts when the worker's last trial ends, as a real worker runs its queue. Time the coordinator spends between two
// Receive calls (CPU time, measured) moves the virtual clock on.
class SimulatedTransport : public Transport {
 public:
  SimulatedTransport(int workers, VirtualClock* clock, double mean, double sigma, double latency, unsigned seed)
      : size_(workers + 1),
        clock_(clock),
        duration_(std::log(mean) - sigma * sigma / 2, sigma),
        latency_(latency),
        rng_(seed),
        free_at_(static_cast<size_t>(workers) + 1, 0) {
    for (int rank = 1; rank < size_; ++rank) inbox_.push({clock_->Now(), rank, Message(HelloMsg{"sim"})});
  }
  int rank() const override { return 0; }
  int size() const override { return size_; }

  Status Send(int dest, const Message& message) override {
    const double now = clock_->Now();
    if (std::holds_alternative<SetupMsg>(message)) {
      ReadyMsg ready;
      ready.ok = true;
      inbox_.push({now, dest, Message(ready)});
    } else if (const auto* assign = std::get_if<AssignMsg>(&message)) {
      const double took = duration_(rng_);
      TrialRecord r;
      r.number = assign->number;
      r.state = TrialState::kComplete;
      r.value = Objective(assign->params);
      double& free_at = free_at_[static_cast<size_t>(dest)];
      r.start_time = std::max(now + latency_, free_at);
      r.end_time = r.start_time + took;
      r.exit_code = 0;
      free_at = r.end_time;
      busy_.push_back({r.start_time, r.end_time});
      inbox_.push({r.end_time + latency_, dest, Message(ResultMsg{std::move(r), ""})});
      if (first_assign_ < 0) first_assign_ = now;
      last_assign_ = now;
      ++assigned_;
    }
    return Status::Ok();
  }

  Result<std::optional<Envelope>> Receive(Millis max_wait) override {
    cpu_.Charge(clock_);
    std::optional<Envelope> out;
    const double deadline = clock_->Now() + static_cast<double>(max_wait.count()) / 1e3;
    if (!inbox_.empty() && inbox_.top().at <= deadline) {
      Pending p = inbox_.top();
      inbox_.pop();
      clock_->Set(p.at);
      out = Envelope{p.source, std::move(p.message)};
    } else {
      clock_->Set(deadline);
    }
    cpu_.Restart();
    return out;
  }

  // Busy time within [from, to] over the workers' available time in it.
  double Utilisation(double from, double to) const {
    double busy = 0;
    for (const auto& [a, b] : busy_) busy += std::max(0.0, std::min(b, to) - std::max(a, from));
    return busy / (static_cast<double>(size_ - 1) * (to - from));
  }
  double first_assign() const { return first_assign_; }
  double last_assign() const { return last_assign_; }
  double coordinator_cpu() const { return cpu_.total(); }
  std::int64_t assigned() const { return assigned_; }

 private:
  static double Objective(const ParamSet& params) {
    double sum = 0;
    for (const auto& [name, value] : params) {
      if (const auto* d = std::get_if<double>(&value)) sum += (*d - 0.3) * (*d - 0.3);
      if (const auto* i = std::get_if<std::int64_t>(&value)) sum += 0.01 * static_cast<double>(*i);
    }
    return sum;
  }

  struct Pending {
    double at;
    int source;
    Message message;
    bool operator<(const Pending& other) const { return at > other.at; }  // earliest first
  };

  int size_;
  VirtualClock* clock_;
  std::lognormal_distribution<double> duration_;
  double latency_;
  std::mt19937_64 rng_;
  std::priority_queue<Pending> inbox_;
  std::vector<double> free_at_;                  // by rank: when its last trial ends
  std::vector<std::pair<double, double>> busy_;  // every trial handed out: when it runs
  bench::CpuCharge cpu_;
  double first_assign_ = -1, last_assign_ = -1;
  std::int64_t assigned_ = 0;
};

// The same sampler asked one trial at a time, to show what batched asks buy.
class OneAtATime : public Sampler {
 public:
  explicit OneAtATime(Sampler* inner) : inner_(inner) {}
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override {
    return inner_->Ask(number, history);
  }

 private:
  Sampler* inner_;
};

int Main(int argc, char** argv) {
  KeepFreedMemoryMapped();  // as the cleansweep binary does
  int workers = 4096;
  double per_worker = 4, mean = 60, sigma = 1.5, latency = 0.001;
  std::string sampler_kind = "random";
  unsigned seed = 1;
  bool batch_asks = true;
  std::string queue = "auto";
  CLI::App app{"The coordinator driven by thousands of simulated workers on a virtual clock"};
  app.add_option("--workers", workers)->check(CLI::Range(1, 1 << 20));
  app.add_option("--sampler", sampler_kind)->check(CLI::IsMember({"random", "tpe", "gp", "sobol"}));
  app.add_option("--trials-per-worker", per_worker, "trials = workers x this")->check(CLI::PositiveNumber);
  app.add_option("--mean", mean, "mean trial duration, seconds")->check(CLI::PositiveNumber);
  app.add_option("--sigma", sigma, "log-normal sigma of the durations (heavier tail when larger)");
  app.add_option("--latency", latency, "one-way message latency, seconds");
  app.add_option("--seed", seed);
  app.add_option("--batch-asks", batch_asks, "ask the sampler once for all workers free in a turn (TPE)");
  app.add_option("--queue", queue, "workers.queue: trials a busy worker may hold (auto, 0, 1, ...)");
  CLI11_PARSE(app, argc, argv);
  const auto trials = static_cast<std::int64_t>(per_worker * workers);
  Result<StudyConfig> config =
      LoadConfigText(bench::BenchStudyYaml("sim", "minimize", trials, "/nonexistent/sim.h5",
                                           "{kind: " + sampler_kind + ", seed: " + std::to_string(seed) + "}") +
                         "workers: {queue: " + queue + "}\n",
                     "sim");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  if (!sampler.ok()) return 2;
  VirtualClock clock;
  SimulatedTransport transport(workers, &clock, mean, sigma, latency, seed);
  std::FILE* sink = std::fopen("/dev/null", "w");
  Progress progress(sink, false, *config);
  OneAtATime one_at_a_time(sampler->get());
  Coordinator coordinator(*config, &transport, batch_asks ? sampler->get() : &one_at_a_time, &clock, &progress);
  const double start = clock.Now();
  Result<RunSummary> summary = coordinator.Run(
      []() -> Result<std::unique_ptr<StudyStore>> {
        return std::unique_ptr<StudyStore>(std::make_unique<testing::MemoryStudyStore>());
      },
      "/nonexistent/sim.trials");
  std::fclose(sink);
  if (!summary.ok()) {
    std::fprintf(stderr, "%s\n", summary.status().message().c_str());
    return 1;
  }
  const double from = transport.first_assign(), to = transport.last_assign();
  const double busy_rate = static_cast<double>(workers) / mean;  // results per second when all are busy
  std::printf(
      "workers=%d sampler=%s%s queue=%s trials=%lld mean=%gs sigma=%.2f: utilisation %.2f%% over %.0f s of virtual "
      "time "
      "(first to last assignment); makespan %.0f s; coordinator CPU %.1f s, %.0f us per trial; it had to "
      "sustain %.0f trials/s, it could sustain %.0f\n",
      workers, sampler_kind.c_str(), batch_asks ? "" : " (one ask per trial)", queue.c_str(),
      static_cast<long long>(summary->finished), mean, sigma, 100 * transport.Utilisation(from, to), to - from,
      clock.Now() - start, transport.coordinator_cpu(),
      1e6 * transport.coordinator_cpu() / static_cast<double>(transport.assigned()), busy_rate,
      static_cast<double>(transport.assigned()) / transport.coordinator_cpu());
  return 0;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) { return cleansweep::Main(argc, argv); }
