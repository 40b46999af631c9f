// Runs a sampler on the benchmark functions, one trial after another, and prints one JSON line per
// (function, seed): the best value after each checkpoint and the total time spent in Ask().
//
//   sampler_bench --sampler tpe --trials 200 --seeds 10 [--set sampler.multivariate=false]
//   sampler_bench --ask-latency 500 --sampler gp [--latency-batch 16]
//                                          # asks with that many completed trials, 8 parameters
//   sampler_bench --ask-rate 10000 --batch 64 --running 4096
//                                          # TPE asks per second, asked in batches as the coordinator
//                                          # does, with that many completed and running trials
//   sampler_bench --serve SPACE.yaml --sampler auto --seed 3 --trials 50
//                                          # one trial after another for an objective outside
//                                          # (bench/gp_bench.py): prints {"sampler", "reason"}, then
//                                          # each trial's parameters as a JSON line, and reads back a
//                                          # line per trial: its value, or "fail"
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/functions.hpp"
#include "samplers/sampler.hpp"
#include "util/allocator.hpp"
#include "util/random.hpp"

namespace {

using namespace cleansweep;
using Clock = std::chrono::steady_clock;

StudyConfig Config(const std::string& sampler, std::uint64_t seed, const std::string& space,
                   const std::vector<std::string>& sets, int n_trials = 100) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: bench, n_trials: " + std::to_string(n_trials) + "}\nsampler: {kind: " + sampler +
                         ", seed: " + std::to_string(seed) + "}\ntrial: {command: [x]}\nspace:\n" + space,
                     "bench", sets);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    std::exit(2);
  }
  return *config;
}

void RunFunction(const std::string& name, const char* space, const std::function<double(const ParamSet&)>& f,
                 const std::string& sampler_kind, int trials, int seeds, const std::vector<std::string>& sets) {
  for (int seed = 0; seed < seeds; ++seed) {
    const StudyConfig config = Config(sampler_kind, static_cast<std::uint64_t>(seed), space, sets);
    std::unique_ptr<Sampler> sampler = MakeSampler(config).value();
    TrialHistory history;
    double best = 1e300, ask_seconds = 0;
    nlohmann::json curve = nlohmann::json::object();
    for (int i = 0; i < trials; ++i) {
      const auto t0 = Clock::now();
      std::optional<ParamSet> params = sampler->Ask(i, history);
      ask_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      TrialRecord r;
      r.number = i;
      r.state = TrialState::kComplete;
      r.params = *params;
      r.value = f(*params);
      best = std::min(best, *r.value);
      history.finished.push_back(std::move(r));
      if ((i + 1) % 50 == 0 || i + 1 == trials) curve[std::to_string(i + 1)] = best;
    }
    nlohmann::json line = {{"tool", "cleansweep"}, {"sampler", sampler_kind},        {"function", name}, {"seed", seed},
                           {"best", curve},        {"sampler_seconds", ask_seconds}, {"trials", trials}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
}

// `completed` finished trials of a quadratic bowl over 8 floats in [0, 1].
TrialHistory BowlHistory(int completed) {
  TrialHistory history;
  SplitMix64 rng(3);
  for (int i = 0; i < completed; ++i) {
    TrialRecord r;
    r.number = i;
    r.state = TrialState::kComplete;
    double v = 0;
    for (int d = 0; d < 8; ++d) {
      const double x = rng.Uniform();
      r.params["p" + std::to_string(d)] = x;
      v += (x - 0.3) * (x - 0.3);
    }
    r.value = v;
    history.finished.push_back(std::move(r));
  }
  return history;
}

StudyConfig BowlConfig(const std::string& kind, const std::vector<std::string>& sets) {
  std::string space;
  for (int d = 0; d < 8; ++d) space += "  p" + std::to_string(d) + ": {type: float, low: 0.0, high: 1.0}\n";
  return Config(kind, 1, space, sets);
}

double Bowl(const ParamSet& p) {
  double v = 0;
  for (const auto& [name, x] : p) v += (AsNumber(x) - 0.3) * (AsNumber(x) - 0.3);
  return v;
}

// The time of an ask (or a batch of `batch` asks) with `completed` finished trials of the bowl:
// the first ask (a sampler that starts there, as on resume: the GP fits and factorises its whole
// model), then 20 more as a running study makes them, each after one more trial finished (the
// GP extends its factor, and refits its kernel when the schedule says so).
void AskLatency(int completed, int batch, const std::string& kind, const std::vector<std::string>& sets) {
  std::unique_ptr<Sampler> sampler = MakeSampler(BowlConfig(kind, sets)).value();
  TrialHistory history = BowlHistory(completed);
  std::int64_t next = completed;
  const auto ask = [&] {
    std::vector<std::int64_t> numbers;
    for (int i = 0; i < batch; ++i) numbers.push_back(next++);
    const auto t0 = Clock::now();
    std::vector<ParamSet> out = sampler->AskBatch(numbers, history);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    TrialRecord r;
    r.number = numbers.front();
    r.state = TrialState::kComplete;
    r.params = out.front();
    r.value = Bowl(r.params);
    history.finished.push_back(std::move(r));
    return ms;
  };
  const double first = ask();
  std::vector<double> ms;
  for (int rep = 0; rep < 20; ++rep) ms.push_back(ask());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"ask_latency_ms\": {\"sampler\": \"%s\", \"completed\": %d, \"params\": 8, \"batch\": %d, "
      "\"first\": %.3f, \"median\": %.3f, \"mean\": %.3f, \"max\": %.3f}}\n",
      kind.c_str(), completed, batch, first, ms[ms.size() / 2], mean, ms.back());
}

// Asks in batches of `batch` with `running` trials out (the constant liar sees them all), as a
// coordinator with many free workers per turn does, for about two seconds.
void AskRate(int completed, int batch, int running, const std::vector<std::string>& sets) {
  std::unique_ptr<Sampler> sampler = MakeSampler(BowlConfig("tpe", sets)).value();
  TrialHistory history = BowlHistory(completed);
  SplitMix64 rng(5);
  for (int i = 0; i < running; ++i) {
    ParamSet p;
    for (int d = 0; d < 8; ++d) p["p" + std::to_string(d)] = rng.Uniform();
    history.running[completed + i] = std::move(p);
  }
  std::int64_t next = completed + running, asked = 0;
  const auto start = Clock::now();
  double seconds = 0;
  while (seconds < 2.0) {
    std::vector<std::int64_t> numbers;
    for (int i = 0; i < batch; ++i) numbers.push_back(next++);
    asked += static_cast<std::int64_t>(sampler->AskBatch(numbers, history).size());
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  std::printf("{\"ask_rate\": {\"completed\": %d, \"running\": %d, \"batch\": %d, \"asks_per_s\": %.0f}}\n", completed,
              running, batch, static_cast<double>(asked) / seconds);
}

// Serves `trials` asks over stdin/stdout for an objective computed by another process: the
// parameters of trial i go out as one JSON line, its value comes back as one line ("fail": the
// trial failed). Only Ask() is timed; the total goes out last as {"sampler_seconds": ...}.
int Serve(const std::string& space_path, const std::string& kind, std::uint64_t seed, int trials,
          const std::vector<std::string>& sets) {
  std::ifstream in(space_path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", space_path.c_str());
    return 2;
  }
  std::stringstream space;
  space << in.rdbuf();
  const StudyConfig config = Config(kind, seed, space.str(), sets, trials);
  std::unique_ptr<Sampler> sampler = MakeSampler(config).value();
  std::printf("%s\n",
              nlohmann::json({{"sampler", config.sampler.kind}, {"reason", config.sampler.reason}}).dump().c_str());
  std::fflush(stdout);
  TrialHistory history;
  double ask_seconds = 0;
  std::string line;
  for (int i = 0; i < trials; ++i) {
    const auto t0 = Clock::now();
    std::optional<ParamSet> params = sampler->Ask(i, history);
    ask_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!params) break;
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, v] : *params) {
      std::visit([&out, &name = name](const auto& x) { out[name] = x; }, v);
    }
    std::printf("%s\n", out.dump().c_str());
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) return 1;
    TrialRecord r;
    r.number = i;
    r.params = std::move(*params);
    if (line == "fail") {
      r.state = TrialState::kFail;
    } else {
      r.state = TrialState::kComplete;
      r.value = std::stod(line);
    }
    history.finished.push_back(std::move(r));
  }
  std::printf("%s\n", nlohmann::json({{"sampler_seconds", ask_seconds}}).dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cleansweep::KeepFreedMemoryMapped();  // as the cleansweep binary does
  CLI::App app{"cleansweep sampler benchmark"};
  std::string sampler = "tpe", only, serve;
  std::uint64_t serve_seed = 0;
  int trials = 200, seeds = 10, latency = 0, latency_batch = 1, rate = 0, batch = 64, running = 0;
  std::vector<std::string> sets;
  app.add_option("--sampler", sampler);
  app.add_option("--trials", trials);
  app.add_option("--seeds", seeds);
  app.add_option("--function", only, "branin, rosenbrock4 or mixed (default: all)");
  app.add_option("--set", sets, "config overrides, e.g. sampler.multivariate=false");
  app.add_option("--ask-latency", latency, "time asks of --sampler with this many completed trials, 8 parameters");
  app.add_option("--latency-batch", latency_batch, "asks per timed call (--ask-latency)")->check(CLI::PositiveNumber);
  app.add_option("--ask-rate", rate, "TPE asks per second in batches, with this many completed trials");
  app.add_option("--batch", batch, "asks per batch (--ask-rate)")->check(CLI::PositiveNumber);
  app.add_option("--running", running, "running trials the constant liar counts (--ask-rate)");
  app.add_option("--serve", serve, "serve asks for an outside objective over this space (YAML, under space:)");
  app.add_option("--seed", serve_seed, "the sampler's seed (--serve)");
  CLI11_PARSE(app, argc, argv);
  if (!serve.empty()) return Serve(serve, sampler, serve_seed, trials, sets);
  if (rate > 0) {
    AskRate(rate, batch, running, sets);
    return 0;
  }
  if (latency > 0) {
    AskLatency(latency, latency_batch, sampler, sets);
    return 0;
  }
  const std::map<std::string, std::pair<const char*, std::function<double(const ParamSet&)>>> functions = {
      {"branin", {bench::kBraninSpace, bench::Branin}},
      {"rosenbrock4", {bench::kRosenbrockSpace, bench::Rosenbrock4}},
      {"mixed", {bench::kMixedSpace, bench::Mixed}}};
  for (const auto& [name, fn] : functions) {
    if (only.empty() || only == name) RunFunction(name, fn.first, fn.second, sampler, trials, seeds, sets);
  }
  return 0;
}
