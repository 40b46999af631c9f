// Packing gang trials on paper (issue 16; bench/README.md, "Packing gangs"): the real Coordinator
// (its GangPlanner, sampler, pruner and in-memory store) driven by a simulated job of `nodes`
// nodes of `per-node` GPUs on a virtual clock. Each trial draws its size from {1, 2, 4, 8} (a
// categorical parameter, trial.gpus: "{g}") and a log-normal duration; with ASHA it reports at 9
// steps spread over that duration and ends at the step the pruner stops it.
//   packing_sim [--nodes 512] [--per-node 8] [--trials-per-gpu 4] [--mean 60] [--sigma 1]
//               [--pruner asha|none] [--backfill true|false] [--mix uniform|small] [--seed 1]
// It prints utilisation (GPU-seconds busy over GPU-seconds available, from the first assignment to
// the last), and how long trials of each size waited between being drawn and starting, against
// the median trial duration.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/sim_clock.hpp"
#include "coordinator/coordinator.hpp"
#include "study/study_store.hpp"
#include "tests/support/memory_study_store.hpp"

namespace cleansweep {
namespace {

using bench::VirtualClock;

constexpr int kSteps = 9;  // reports per trial, evenly over its duration (ASHA's rungs at 1, 3, 9)

// Records when each trial's parameters were drawn, to measure how long it waited for workers.
// With `weights` (of sizes 1, 2, 4, 8), it draws each trial's size itself from them: the uniform
// categorical gives every size a quarter of the trials.
class TimedSampler : public Sampler {
 public:
  TimedSampler(Sampler* inner, const Clock* clock, std::vector<double> weights, unsigned seed)
      : inner_(inner), clock_(clock), weights_(std::move(weights)), rng_(seed) {}
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override {
    drawn_[number] = clock_->Now();
    std::optional<ParamSet> params = inner_->Ask(number, history);
    if (params && !weights_.empty()) {
      std::discrete_distribution<int> size(weights_.begin(), weights_.end());
      (*params)["g"] = std::int64_t{1} << size(rng_);
    }
    return params;
  }
  double DrawnAt(std::int64_t number) const { return drawn_.at(number); }

 private:
  Sampler* inner_;
  const Clock* clock_;
  std::vector<double> weights_;
  std::mt19937_64 rng_;
  std::map<std::int64_t, double> drawn_;
};

// Every worker rank of the job at once. A gang's members share one duration; its rank 0 reports
// the steps; each member's result arrives `latency` after the trial ends, or after the prune.
class SimulatedJob : public Transport {
 public:
  SimulatedJob(int nodes, int per_node, VirtualClock* clock, const TimedSampler* sampler, double mean, double sigma,
               double latency, unsigned seed)
      : size_(nodes * per_node + 1),
        per_node_(per_node),
        clock_(clock),
        sampler_(sampler),
        duration_(std::log(mean) - sigma * sigma / 2, sigma),
        latency_(latency),
        rng_(seed) {
    for (int rank = 1; rank < size_; ++rank) {
      inbox_.push({clock_->Now(), rank, -1, 0, Message(HelloMsg{"node" + std::to_string((rank - 1) / per_node_)})});
    }
  }
  int rank() const override { return 0; }
  int size() const override { return size_; }

  Status Send(int dest, const Message& message) override {
    const double now = clock_->Now();
    if (std::holds_alternative<SetupMsg>(message)) {
      ReadyMsg ready;
      ready.ok = true;
      ready.address = "node" + std::to_string((dest - 1) / per_node_);
      ready.port = 29500;
      inbox_.push({now, dest, -1, 0, Message(ready)});
    } else if (const auto* assign = std::get_if<AssignMsg>(&message)) {
      Start(dest, *assign, now);
    } else if (const auto* prune = std::get_if<PruneMsg>(&message)) {
      Prune(prune->number, now);
    }
    return Status::Ok();
  }

  Result<std::optional<Envelope>> Receive(Millis max_wait) override {
    cpu_.Charge(clock_);
    std::optional<Envelope> out;
    const double deadline = clock_->Now() + static_cast<double>(max_wait.count()) / 1e3;
    while (!inbox_.empty() && inbox_.top().at <= deadline) {
      Pending p = inbox_.top();
      inbox_.pop();
      if (p.trial >= 0 && trials_.at(p.trial).epoch != p.epoch) continue;  // outrun by a prune
      clock_->Set(p.at);
      out = Envelope{p.source, std::move(p.message)};
      break;
    }
    if (!out) clock_->Set(deadline);
    cpu_.Restart();
    return out;
  }

  struct Stats {
    double utilisation = 0;
    double median_duration = 0;
    std::map<int, std::vector<double>> waits;  // by size
    std::int64_t trials = 0;
  };
  Stats Measure() const {
    Stats s;
    const double from = first_assign_, to = last_assign_;
    double busy = 0;
    std::vector<double> durations;
    for (const auto& [number, t] : trials_) {
      busy += static_cast<double>(t.size) * std::max(0.0, std::min(t.end, to) - std::max(t.start, from));
      durations.push_back(t.end - t.start);
      s.waits[t.size].push_back(t.wait);
    }
    s.utilisation = busy / (static_cast<double>(size_ - 1) * (to - from));
    std::sort(durations.begin(), durations.end());
    s.median_duration = durations[durations.size() / 2];
    s.trials = static_cast<std::int64_t>(trials_.size());
    return s;
  }
  double coordinator_cpu() const { return cpu_.total(); }

 private:
  struct Trial {
    int size = 1;
    double start = 0, end = 0, wait = 0;
    int epoch = 0;  // bumped by a prune: messages of an earlier epoch are void
    std::vector<int> ranks;
    bool pruned = false;
  };
  struct Pending {
    double at;
    int source;
    std::int64_t trial;  // -1: not a trial's message
    int epoch;
    Message message;
    bool operator<(const Pending& other) const { return at > other.at; }  // earliest first
  };

  void Start(int dest, const AssignMsg& assign, double now) {
    auto [it, first] = trials_.try_emplace(assign.number);
    Trial& t = it->second;
    if (first) {
      t.size = assign.gang.size;
      t.start = now + latency_;
      t.end = t.start + duration_(rng_);
      t.wait = now - sampler_->DrawnAt(assign.number);
      if (first_assign_ < 0) first_assign_ = now;
      last_assign_ = now;
      for (int k = 1; k <= kSteps; ++k) {  // rank 0 reports; the value rises with its quality
        const double at = t.start + (t.end - t.start) * k / kSteps;
        const double quality = 1 - std::pow(std::log10(std::get<double>(assign.params.at("lr"))) + 2.5, 2) / 10;
        IntermediateValue v{assign.number, k, quality * (1 - std::exp(-k / 3.0)), at, {}};
        inbox_.push({at + latency_, dest, assign.number, 0, Message(StepMsg{v})});
      }
    }
    t.ranks.push_back(dest);
    inbox_.push({t.end + latency_, dest, assign.number, t.epoch, Message(ResultMsg{Outcome(assign, t, dest), ""})});
  }

  void Prune(std::int64_t number, double now) {
    Trial& t = trials_.at(number);
    if (t.pruned) return;  // every member is told: one prune
    t.pruned = true;
    ++t.epoch;
    t.end = now;
    for (const int rank : t.ranks) {
      AssignMsg assign;
      assign.number = number;
      TrialRecord r = Outcome(assign, t, rank);
      r.state = TrialState::kPruned;
      inbox_.push({now + latency_, rank, number, t.epoch, Message(ResultMsg{r, ""})});
    }
  }

  static TrialRecord Outcome(const AssignMsg& assign, const Trial& t, int rank) {
    TrialRecord r;
    r.number = assign.number;
    r.params = assign.params;
    r.state = TrialState::kComplete;
    r.value = 0.5;
    r.worker = rank;
    r.start_time = t.start;
    r.end_time = t.end;
    r.exit_code = 0;
    return r;
  }

  int size_;
  int per_node_;
  VirtualClock* clock_;
  const TimedSampler* sampler_;
  std::lognormal_distribution<double> duration_;
  double latency_;
  std::mt19937_64 rng_;
  std::priority_queue<Pending> inbox_;
  std::map<std::int64_t, Trial> trials_;
  bench::CpuCharge cpu_;
  double first_assign_ = -1, last_assign_ = -1;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

int Main(int argc, char** argv) {
  int nodes = 512, per_node = 8;
  double per_gpu = 4, mean = 60, sigma = 1.0, latency = 0.001;
  std::string pruner = "asha";
  std::string mix = "uniform";
  bool backfill = true;
  unsigned seed = 1;
  CLI::App app{"Gang trials of 1, 2, 4 and 8 GPUs packed onto a simulated cluster by the real coordinator"};
  app.add_option("--nodes", nodes)->check(CLI::Range(1, 1 << 16));
  app.add_option("--per-node", per_node, "GPUs (workers) per node")->check(CLI::Range(8, 1024));
  app.add_option("--trials-per-gpu", per_gpu, "trials = GPUs x this / the mean size")->check(CLI::PositiveNumber);
  app.add_option("--mean", mean, "mean trial duration, seconds")->check(CLI::PositiveNumber);
  app.add_option("--sigma", sigma, "log-normal sigma of the durations");
  app.add_option("--pruner", pruner)->check(CLI::IsMember({"asha", "none"}));
  app.add_option("--backfill", backfill, "workers.backfill: false is first come, first served");
  app.add_option("--mix", mix,
                 "trial sizes: uniform (a quarter each of 1, 2, 4, 8) or small (70% 1, 15% 2, 10% 4, 5% 8)")
      ->check(CLI::IsMember({"uniform", "small"}));
  app.add_option("--seed", seed);
  CLI11_PARSE(app, argc, argv);
  const int gpus = nodes * per_node;
  const std::vector<double> weights =
      mix == "small" ? std::vector<double>{0.70, 0.15, 0.10, 0.05} : std::vector<double>{};
  const double mean_size = mix == "small" ? 0.70 + 0.30 + 0.40 + 0.40 : 3.75;
  const auto trials = static_cast<std::int64_t>(per_gpu * gpus / mean_size);
  const std::string yaml =
      "study: {name: packing, direction: maximize, n_trials: " + std::to_string(trials) +
      ", storage: /nonexistent/p.h5}\nsampler: {kind: random, seed: " + std::to_string(seed) + "}\npruner: " +
      (pruner == "asha" ? "{kind: asha, min_resource: 1, max_resource: 9, reduction_factor: 3}" : "{kind: none}") +
      "\ntrial: {command: [true], gpus: \"{g}\"}\nworkers: {backfill: " + (backfill ? "true" : "false") +
      "}\nspace:\n  g: {type: categorical, choices: [1, 2, 4, 8]}\n"
      "  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n";
  Result<StudyConfig> config = LoadConfigText(yaml, "packing");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  if (!sampler.ok()) return 2;
  VirtualClock clock;
  TimedSampler timed(sampler->get(), &clock, weights, seed);
  SimulatedJob job(nodes, per_node, &clock, &timed, mean, sigma, latency, seed);
  std::FILE* sink = std::fopen("/dev/null", "w");
  Progress progress(sink, false, *config);
  Coordinator coordinator(*config, &job, &timed, &clock, &progress);
  Result<RunSummary> summary = coordinator.Run(
      []() -> Result<std::unique_ptr<StudyStore>> {
        return std::unique_ptr<StudyStore>(std::make_unique<testing::MemoryStudyStore>());
      },
      "/nonexistent/p.trials");
  std::fclose(sink);
  if (!summary.ok()) {
    std::fprintf(stderr, "%s\n", summary.status().message().c_str());
    return 1;
  }
  const SimulatedJob::Stats s = job.Measure();
  std::printf(
      "gpus=%d (%d nodes of %d) sizes=%s pruner=%s %s trials=%lld mean=%gs sigma=%.2f: utilisation %.2f%%; "
      "median trial %.1f s; wait/median trial, median (p90) by size:",
      gpus, nodes, per_node, mix.c_str(), pruner.c_str(), backfill ? "backfill" : "fcfs",
      static_cast<long long>(s.trials), mean, sigma, 100 * s.utilisation, s.median_duration);
  for (const auto& [size, waits] : s.waits) {
    std::printf(" %d: %.2f (%.2f)", size, Quantile(waits, 0.5) / s.median_duration,
                Quantile(waits, 0.9) / s.median_duration);
  }
  std::printf("; coordinator CPU %.1f s\n", job.coordinator_cpu());
  return 0;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) { return cleansweep::Main(argc, argv); }
