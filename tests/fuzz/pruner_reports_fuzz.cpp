// Fuzz target: the pruners and the coordinator's handling of reports (issue 40), with the steps
// and values a trial chooses. The same bytes are read two ways:
//
//  1. Raw reports straight into a pruner, bypassing the protocol's step limit: bytes 0-2 pick the
//     pruner and its options, byte 3 says how many reports follow, and each is 11 bytes (which
//     trial, how to read the step, a byte for 4^k or the value, 8 bytes of step), steps and values
//     drawn mostly from the edges (INT64_MAX, INT64_MAX - 1, 2^62, 4^k, 2^53 - 1, +-1e308,
//     +-DBL_MAX). The pruner is driven as the coordinator drives it: ShouldPrune after each
//     report, Promote after each, promotions taken.
//  2. A sweep: the rest of the input, split at NUL bytes, is the report text of up to 6 trials,
//     which a real Coordinator and two real Workers (threads, an in-process transport, a memory
//     store) run with the same pruner; each trial's text goes through the ProtocolParser and
//     ClassifyOutcome as a spawned trial's bytes do. The sweep must end with every trial's row
//     final and every promise of docs/trial-protocol.md kept: steps past 2^53 - 1 are FAIL.
//
// A pruner loop that never ends is the bug of issue 40: the driver's 25 s alarm catches it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/study_config.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/progress.hpp"
#include "launch/launcher.hpp"
#include "launch/protocol_parser.hpp"
#include "pruners/pbt_pruner.hpp"
#include "pruners/pruner.hpp"
#include "samplers/sampler.hpp"
#include "support/borrowed_store.hpp"
#include "support/memory_study_store.hpp"
#include "transport/in_process_transport.hpp"
#include "util/clock.hpp"
#include "worker/worker.hpp"

namespace cleansweep {
namespace {

// An invariant broke: abort, so the driver keeps the input.
void Require(bool holds, const std::string& what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz_pruner_reports: %s\n", what.c_str());
  std::abort();
}

class Bytes {
 public:
  Bytes(const std::uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  std::uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint64_t Word() {
    std::uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w = w << 8 | Byte();
    return w;
  }

 private:
  const std::uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t EdgeStep(std::uint8_t pick, std::uint8_t k, std::uint64_t raw) {
  switch (pick % 8) {
    case 0:
      return kMax;
    case 1:
      return kMax - 1;
    case 2:
      return std::int64_t{1} << 62;
    case 3:
      return std::int64_t{1} << (2 * (k % 32));  // 4^k up to 4^31
    case 4:
      return ProtocolParser::kMaxStep;
    case 5:
      return k;
    default:
      return static_cast<std::int64_t>(raw & static_cast<std::uint64_t>(kMax));
  }
}

double EdgeValue(std::uint8_t pick) {
  static const double kValues[] = {
      1e308, -1e308, std::numeric_limits<double>::max(),        -std::numeric_limits<double>::max(),
      0.0,   -0.0,   std::numeric_limits<double>::denorm_min(), 0.5,
      -0.5,  1.0};
  return kValues[pick % (sizeof kValues / sizeof kValues[0])];
}

struct Choice {
  std::string pruner_yaml;  // the config's pruner: or sampler: line
  bool pbt = false;
  PrunerOptions options;
  SamplerOptions pbt_options;
  Direction direction = Direction::kMaximize;
};

Choice ChooseFrom(std::uint8_t kind_byte, std::uint8_t a, std::uint8_t b) {
  static const std::int64_t kResources[] = {1, 2, 3, 1000, ProtocolParser::kMaxStep, kMax - 1};
  Choice c;
  c.direction = kind_byte & 0x80 ? Direction::kMinimize : Direction::kMaximize;
  const int kind = kind_byte % 5;
  PrunerOptions& o = c.options;
  o.min_resource = kResources[a % 6];
  o.reduction_factor = 2 + (b % 5 == 4 ? 998 : b % 5);  // 2..5 or 1000 (the config's cap)
  o.min_early_stopping_rate = (a >> 3) % 4 == 3 ? 60 : (a >> 3) % 4;
  // min_resource * 2 + 7, saturated: min_resource may be kMax - 1 itself.
  const std::int64_t beyond = o.min_resource > (kMax - 7) / 2 ? kMax : o.min_resource * 2 + 7;
  o.max_resource = (b >> 4) % 3 == 0 ? 0 : (b >> 4) % 3 == 1 ? kMax : beyond;
  if (o.max_resource > 0 && o.max_resource <= o.min_resource) o.max_resource = 0;
  o.n_startup_trials = a % 3;
  o.n_warmup_steps = (b & 8) ? kMax - 1 : b % 4;
  o.interval_steps = (b & 4) ? kMax : 1 + a % 3;
  o.resume = (b & 2) != 0;
  const std::string common =
      "min_resource: " + std::to_string(o.min_resource) + ", reduction_factor: " + std::to_string(o.reduction_factor);
  switch (kind) {
    case 0:
      o.kind = "median";
      c.pruner_yaml = "pruner: {kind: median, n_startup_trials: " + std::to_string(o.n_startup_trials) +
                      ", n_warmup_steps: " + std::to_string(o.n_warmup_steps) +
                      ", interval_steps: " + std::to_string(o.interval_steps) + "}";
      break;
    case 1:
    case 2:
      o.kind = "asha";
      o.resume = kind == 2;
      c.pruner_yaml = "pruner: {kind: asha, " + common +
                      ", min_early_stopping_rate: " + std::to_string(o.min_early_stopping_rate) +
                      (o.max_resource > 0 ? ", max_resource: " + std::to_string(o.max_resource) : "") +
                      (o.resume ? ", resume: true}" : "}");
      break;
    case 3:
      o.kind = "hyperband";
      if (o.max_resource == 0) o.max_resource = o.min_resource < kMax / 100 ? o.min_resource * 81 : kMax;
      o.min_early_stopping_rate = 0;
      c.pruner_yaml = "pruner: {kind: hyperband, " + common + ", max_resource: " + std::to_string(o.max_resource) +
                      (o.resume ? ", resume: true}" : "}");
      break;
    default:
      c.pbt = true;
      c.pbt_options.kind = "pbt";
      c.pbt_options.population = 2 + a % 3;
      c.pbt_options.interval = (b & 4) ? kMax : 1 + b % 4;
      c.pbt_options.quantile = 0.25 + 0.25 * (a % 2);
      c.pruner_yaml = "sampler: {kind: pbt, seed: 1, population: " + std::to_string(c.pbt_options.population) +
                      ", interval: " + std::to_string(c.pbt_options.interval) +
                      ", quantile: " + std::to_string(c.pbt_options.quantile) + "}";
      break;
  }
  return c;
}

// Part 1: reports straight into the pruner.
void DrivePruner(const Choice& choice, Bytes bytes) {
  std::unique_ptr<Pruner> pruner = choice.pbt ? std::make_unique<PbtPruner>(choice.pbt_options, choice.direction)
                                              : MakePruner(choice.options, choice.direction);
  Require(pruner != nullptr, "no pruner for " + choice.pruner_yaml);
  Curves curves;
  while (!bytes.empty()) {
    const std::int64_t number = bytes.Byte() % 6;
    const std::uint8_t pick = bytes.Byte(), k = bytes.Byte();
    const std::int64_t step = EdgeStep(pick, k, bytes.Word() >> 1);
    const double value = (pick & 0x80) ? EdgeValue(k) : std::ldexp(static_cast<double>(k) - 128, pick % 64 - 32);
    TrialCurve& curve = curves[number];
    if (curve.state != TrialState::kRunning && !curve.values.empty())
      continue;  // it ended: a new report is another trial's
    curve.values[step] = value;
    curve.checkpoint_step = std::max(curve.checkpoint_step, step);
    if (pruner->ShouldPrune(number, step, curves)) {
      curve.state = pruner->Pauses() ? TrialState::kPaused : TrialState::kPruned;
    } else if (pick & 0x40) {
      curve.state = TrialState::kComplete;
    }
    if (const std::optional<Promotion> up = pruner->Promote(curves)) {
      Require(curves.count(up->number) && curves.at(up->number).state == TrialState::kPaused,
              "promoted trial " + std::to_string(up->number) + " is not paused");
      curves[up->number].state = TrialState::kRunning;
    }
  }
}

// A trial whose report bytes are a slice of the input, delivered a few at a time.
class ScriptedTrial : public TrialProcess {
 public:
  ScriptedTrial(std::string text, size_t chunk, std::vector<std::string> metrics)
      : text_(std::move(text)), chunk_(chunk), parser_(std::move(metrics)) {}

  void Poll(Millis, std::vector<StepValue>* steps) override {
    if (finished_) return;
    if (!stop_ && at_ < text_.size()) {
      const size_t n = std::min(chunk_, text_.size() - at_);
      parser_.Feed(text_.data() + at_, n, steps);
      at_ += n;
      if (parser_.error()) Stop(TrialState::kFail, "protocol error: " + *parser_.error());
      return;
    }
    if (!stop_) parser_.Finish(steps);
    outcome_.exit_code = 0;
    ClassifyOutcome(parser_, stop_, reason_, MemoryCap{}, &outcome_);
    finished_ = true;
  }
  bool Finished() const override { return finished_; }
  void Stop(TrialState state, const std::string& reason) override {
    if (!stop_) stop_ = state, reason_ = reason;
  }
  void Kill(TrialState state, const std::string& reason) override { Stop(state, reason); }
  void RequestPrune(const std::string& reason, Millis) override { Stop(TrialState::kPruned, reason); }
  const TrialOutcome& Outcome() const override { return outcome_; }

 private:
  std::string text_;
  size_t chunk_;
  ProtocolParser parser_;
  size_t at_ = 0;
  bool finished_ = false;
  std::optional<TrialState> stop_;
  std::string reason_;
  TrialOutcome outcome_;
};

class ScriptedLauncher : public Launcher {
 public:
  ScriptedLauncher(std::vector<std::string> texts, size_t chunk) : texts_(std::move(texts)), chunk_(chunk) {}
  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override {
    const std::int64_t number = std::stoll(spec.env.at("CLEANSWEEP_TRIAL"));
    const std::string& text = texts_[static_cast<size_t>(number) % texts_.size()];
    return std::unique_ptr<TrialProcess>(std::make_unique<ScriptedTrial>(text, chunk_, spec.metrics));
  }

 private:
  std::vector<std::string> texts_;
  size_t chunk_;
};

// Part 2: a sweep whose trials report the input's text.
void RunSweep(const Choice& choice, const std::vector<std::string>& texts, size_t chunk) {
  // PBT's n_trials counts its population at least; its extra members replay the texts in turn.
  const auto n_trials =
      std::max<std::int64_t>(static_cast<std::int64_t>(texts.size()), choice.pbt ? choice.pbt_options.population : 0);
  const std::string text = "study: {name: f, n_trials: " + std::to_string(n_trials) +
                           ", direction: " + (choice.direction == Direction::kMaximize ? "maximize" : "minimize") +
                           "}\n" + (choice.pbt ? "" : "sampler: {kind: random, seed: 2}\n") + choice.pruner_yaml +
                           "\ntrial: {command: [sh]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n";
  Result<StudyConfig> config = LoadConfigText(text, "fuzz.yaml");
  Require(config.ok(),
          "the fuzz config does not load: " + (config.ok() ? "" : config.status().message()) + "\n" + text);
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  Require(sampler.ok(), "no sampler");
  constexpr int kWorkers = 2;
  InProcessHub hub(kWorkers + 1);
  InProcessTransport coordinator_transport(&hub, 0);
  ScriptedLauncher launcher(texts, chunk);
  std::vector<std::unique_ptr<InProcessTransport>> transports;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int rank = 1; rank <= kWorkers; ++rank) {
    transports.push_back(std::make_unique<InProcessTransport>(&hub, rank));
    WorkerIdentity id;
    id.host = "host" + std::to_string(rank);
    id.address = id.host;
    workers.push_back(std::make_unique<Worker>(transports.back().get(), &launcher, id));
  }
  std::vector<Status> worker_status(kWorkers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i) threads.emplace_back([&, i] { worker_status[i] = workers[i]->Run(); });
  testing::MemoryStudyStore store;
  std::FILE* sink = std::fopen("/dev/null", "w");
  Result<RunSummary> summary = Status::RuntimeError("not run");
  {
    Progress progress(sink, false, *config);
    const SystemClock clock;
    Coordinator coordinator(*config, &coordinator_transport, sampler->get(), &clock, &progress,
                            CoordinatorTiming{Millis(20), Millis(5000)});
    summary = coordinator.Run(
        [&]() -> Result<std::unique_ptr<StudyStore>> {
          return std::unique_ptr<StudyStore>(std::make_unique<testing::BorrowedStore>(&store));
        },
        "/tmp/cleansweep-fuzz.trials");
  }
  for (std::thread& t : threads) t.join();
  std::fclose(sink);
  Require(summary.ok(), "the sweep failed: " + (summary.ok() ? "" : summary.status().message()));
  for (const Status& s : worker_status) Require(s.ok(), "a worker failed: " + s.message());
  Require(!store.trials().empty(), "no trial ran");
  for (const TrialRecord& r : store.trials()) {
    Require(r.state != TrialState::kRunning && r.state != TrialState::kPaused,
            "trial " + std::to_string(r.number) + " ended " + TrialStateName(r.state));
    Require(r.last_step <= ProtocolParser::kMaxStep, "a step past the limit was recorded");
  }
  for (const IntermediateValue& v : store.intermediate()) {
    Require(v.step >= 0 && v.step <= ProtocolParser::kMaxStep && std::isfinite(v.value),
            "an intermediate value out of range was stored");
  }
}

}  // namespace
}  // namespace cleansweep

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace cleansweep;
  if (size < 4) return 0;
  const Choice choice = ChooseFrom(data[0], data[1], data[2]);
  const size_t text_at = std::min(size, 4 + size_t{data[3]} * 11);
  DrivePruner(choice, Bytes(data + 4, text_at - 4));
  // The report texts: the rest split at NUL bytes, up to 6 trials of up to 4 KiB each.
  std::vector<std::string> texts(1);
  for (size_t i = text_at; i < size && texts.size() <= 6; ++i) {
    if (data[i] == 0) {
      texts.emplace_back();
    } else if (texts.back().size() < 4096) {
      texts.back() += static_cast<char>(data[i]);
    }
  }
  if (texts.size() > 6) texts.resize(6);
  RunSweep(choice, texts, 1 + data[1] % 97);
  return 0;
}
