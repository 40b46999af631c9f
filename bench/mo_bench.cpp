// Runs a sampler on the multi-objective test problems ZDT1, ZDT2, ZDT3 (two objectives, 30
// variables) and DTLZ2 (three objectives, 12 variables), one trial after another, and prints one
// JSON line per (problem, seed): every trial's objective values and the total time spent in Ask().
// bench/optuna_mo_bench.py prints the same for Optuna; bench/mo_summarize.py computes the
// hypervolumes of both with one implementation.
//
//   mo_bench --sampler nsga2 --trials 500 --seeds 5 [--first-seed 20] [--problem zdt1]
//            [--set sampler.population_size=40]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "samplers/sampler.hpp"

namespace {

using namespace cleansweep;
using Clock = std::chrono::steady_clock;
using Objectives = std::function<std::vector<double>(const std::vector<double>&)>;

std::vector<double> Zdt(const std::vector<double>& x, int which) {
  const double n = static_cast<double>(x.size());
  double sum = 0;
  for (size_t i = 1; i < x.size(); ++i) sum += x[i];
  const double g = 1 + 9 * sum / (n - 1);
  const double f1 = x[0];
  const double r = f1 / g;
  const double h = which == 1   ? 1 - std::sqrt(r)
                   : which == 2 ? 1 - r * r
                                : 1 - std::sqrt(r) - r * std::sin(10 * M_PI * f1);
  return {f1, g * h};
}

std::vector<double> Dtlz2(const std::vector<double>& x) {  // three objectives
  double g = 0;
  for (size_t i = 2; i < x.size(); ++i) g += (x[i] - 0.5) * (x[i] - 0.5);
  const double a = x[0] * M_PI / 2, b = x[1] * M_PI / 2;
  return {(1 + g) * std::cos(a) * std::cos(b), (1 + g) * std::cos(a) * std::sin(b), (1 + g) * std::sin(a)};
}

struct Problem {
  int variables;
  int objectives;
  Objectives f;
};

StudyConfig Config(const std::string& sampler, std::uint64_t seed, const Problem& problem,
                   const std::vector<std::string>& sets) {
  std::string text = "study: {name: bench, metrics: [";
  for (int m = 0; m < problem.objectives; ++m) {
    text += std::string(m ? ", " : "") + "{name: f" + std::to_string(m + 1) + ", direction: minimize}";
  }
  text += "]}\nsampler: {kind: " + sampler + ", seed: " + std::to_string(seed) + "}\ntrial: {command: [x]}\nspace:\n";
  for (int i = 0; i < problem.variables; ++i) {
    text += "  x" + std::to_string(i) + ": {type: float, low: 0.0, high: 1.0}\n";
  }
  Result<StudyConfig> config = LoadConfigText(text, "bench", sets);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    std::exit(2);
  }
  return *config;
}

void Run(const std::string& name, const Problem& problem, const std::string& sampler_kind, int trials, int first_seed,
         int seeds, const std::vector<std::string>& sets) {
  for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
    const StudyConfig config = Config(sampler_kind, static_cast<std::uint64_t>(seed), problem, sets);
    Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
    if (!sampler.ok()) {
      std::fprintf(stderr, "%s\n", sampler.status().message().c_str());
      std::exit(2);
    }
    TrialHistory history;
    double ask_seconds = 0;
    nlohmann::json values = nlohmann::json::array();
    for (int i = 0; i < trials; ++i) {
      const auto t0 = Clock::now();
      std::optional<ParamSet> params = (*sampler)->Ask(i, history);
      ask_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      std::vector<double> x(static_cast<size_t>(problem.variables));
      for (int v = 0; v < problem.variables; ++v)
        x[static_cast<size_t>(v)] = AsNumber(params->at("x" + std::to_string(v)));
      TrialRecord r;
      r.number = i;
      r.state = TrialState::kComplete;
      r.params = *params;
      r.values = problem.f(x);
      r.value = r.values.front();
      values.push_back(r.values);
      history.finished.push_back(std::move(r));
    }
    nlohmann::json line = {{"tool", "cleansweep"}, {"sampler", sampler_kind}, {"problem", name},
                           {"seed", seed},         {"values", values},        {"sampler_seconds", ask_seconds}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cleansweep multi-objective sampler benchmark"};
  std::string sampler = "nsga2", only;
  int trials = 500, first_seed = 0, seeds = 5;
  std::vector<std::string> sets;
  app.add_option("--sampler", sampler);
  app.add_option("--trials", trials);
  app.add_option("--seeds", seeds, "how many seeds");
  app.add_option("--first-seed", first_seed, "the first of them (held-out seeds for trying a setting)");
  app.add_option("--problem", only, "zdt1, zdt2, zdt3 or dtlz2 (default: all)");
  app.add_option("--set", sets, "config overrides, e.g. sampler.population_size=40");
  CLI11_PARSE(app, argc, argv);
  const std::map<std::string, Problem> problems = {
      {"zdt1", {30, 2, [](const std::vector<double>& x) { return Zdt(x, 1); }}},
      {"zdt2", {30, 2, [](const std::vector<double>& x) { return Zdt(x, 2); }}},
      {"zdt3", {30, 2, [](const std::vector<double>& x) { return Zdt(x, 3); }}},
      {"dtlz2", {12, 3, Dtlz2}}};
  for (const auto& [name, problem] : problems) {
    if (only.empty() || only == name) Run(name, problem, sampler, trials, first_seed, seeds, sets);
  }
  return 0;
}
