// Search quality of shards that share (issue 38, point 5), on a virtual clock: the samplers
// themselves, fed as the coordinator feeds them (src/coordinator/coordinator.cpp, ReadSiblings), with
// trials that take 0.5 to 1.5 time units each and finish in the order those durations give.
//
//   single       one study of --trials trials, 4 workers: its sampler sees the 3 others running
//   sharing      4 shards of 1 worker (study.shard K/4, each its own seed), every shard reading the
//                others' files every --share-every units: their finished trials become history, their
//                running trials pending, and the shards stop when the sweep's trials reach --trials
//   independent  4 shards of 1 worker that do not read each other, --trials / 4 each
//   cold         one study of --trials trials, 1 worker
//   warm         one study of --trials / 2 trials, 1 worker, warm-started from another study of
//                --trials / 2 (other seed, same problem): its regret counts its own trials only
//
// What a read sees: each sibling as it was at the read (its finished trials, its RUNNING rows);
// reads fall every --share-every units, at a phase of their own per shard, as each coordinator's
// timer does. Prints one JSON line per (problem, sampler, mode, seed): the sweep's best regret and
// how many trials it ran (the overshoot of one budget shows there); bench/shared_summarize.py
// makes the tables.
//   shared_bench --problems hpolib_protein_structure,hartmann6 --samplers tpe,gp --seeds 10
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/functions.hpp"
#include "samplers/sampler.hpp"
#include "util/allocator.hpp"
#include "util/random.hpp"

namespace cleansweep {
namespace {

struct Problem {
  std::string space;                              // YAML under space:
  std::function<double(const ParamSet&)> regret;  // >= 0, 0 at the optimum
};

// A table of ../shared/benchmarks/hpolib/: integer indices for the ordered values, categories for
// the rest; a trial looks its configuration up.
Problem HpolibProblem(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open (HPOLIB_DIR names the folder of the tables)\n", path.c_str());
    std::exit(2);
  }
  auto data = std::make_shared<nlohmann::json>(nlohmann::json::parse(in));
  Problem p;
  for (const auto& [name, kind] : (*data)["space"].items()) {
    if (kind.is_array()) {
      p.space += "  " + name + ": {type: categorical, choices: [";
      for (size_t i = 0; i < kind.size(); ++i) p.space += (i ? ", " : "") + kind[i].get<std::string>();
      p.space += "]}\n";
    } else {
      p.space += "  " + name + ": {type: int, low: 0, high: " + std::to_string(kind.get<int>() - 1) + "}\n";
    }
  }
  p.regret = [data](const ParamSet& params) {
    std::string key;
    for (const auto& [name, kind] : (*data)["space"].items()) {
      const ParamValue& v = params.at(name);
      if (kind.is_array()) {
        const std::string& choice = std::get<std::string>(v);
        for (size_t i = 0; i < kind.size(); ++i) {
          if (kind[i] == choice) key += std::to_string(i);
        }
      } else {
        key += std::to_string(static_cast<int>(AsNumber(v)));
      }
    }
    return (*data)["table"].at(key).get<double>() - (*data)["best"].get<double>();
  };
  return p;
}

Problem MakeProblem(const std::string& name, const std::string& hpolib_dir) {
  if (name == "hartmann6") {
    Problem p;
    for (int k = 0; k < 6; ++k) p.space += "  x" + std::to_string(k) + ": {type: float, low: 0.0, high: 1.0}\n";
    p.regret = [](const ParamSet& params) { return bench::Hartmann6(params) + 3.32237; };
    return p;
  }
  const std::string prefix = "hpolib_";
  if (name.rfind(prefix, 0) != 0) {
    std::fprintf(stderr, "unknown problem %s (hartmann6, hpolib_<data set>)\n", name.c_str());
    std::exit(2);
  }
  return HpolibProblem(hpolib_dir + "/hpolib-" + name.substr(prefix.size()) + ".json");
}

StudyConfig Config(const std::string& sampler, std::uint64_t seed, const Problem& problem, std::int64_t n_trials,
                   const std::string& shard) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: bench, n_trials: " + std::to_string(n_trials) +
                         (shard.empty() ? "" : ", shard: " + shard) + "}\nsampler: {kind: " + sampler +
                         ", seed: " + std::to_string(seed) + "}\ntrial: {command: [x]}\nspace:\n" + problem.space,
                     "bench");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    std::exit(2);
  }
  return *config;
}

// One coordinator of the simulation: its sampler, the history it gives it, its workers.
struct SimShard {
  std::unique_ptr<Sampler> sampler;
  TrialHistory history;
  int workers = 1;
  int busy = 0;
  std::int64_t budget = 0;  // its own trials, or (sharing) the sweep's
  std::int64_t next = 0;
  bool shares = false;
  double phase = 0;       // its reads fall at phase + k * share_every
  double last_read = -1;  // the time of the read its history reflects
  struct Trial {
    ParamSet params;
    double start = 0, end = 0, regret = 0;
    bool done = false;
  };
  std::vector<Trial> trials;  // its own, by number: what its study file holds
  std::vector<std::int64_t> shared_running;
  std::set<std::int64_t> seen;
  std::int64_t shared_taken = 0;
  std::int64_t own_finished = 0;
};

std::int64_t ForeignKey(size_t shard, std::int64_t number) {
  return -((static_cast<std::int64_t>(shard) + 1) << 32) - 1 - number;
}

// Shard `s` reads its siblings' files as they were at time `at`.
void ReadSiblings(std::vector<SimShard>& shards, size_t s, double at) {
  SimShard& me = shards[s];
  for (const std::int64_t key : me.shared_running) me.history.running.erase(key);
  me.shared_running.clear();
  me.shared_taken = 0;
  std::vector<std::pair<double, TrialRecord>> fresh;
  for (size_t j = 0; j < shards.size(); ++j) {
    if (j == s) continue;
    for (size_t n = 0; n < shards[j].trials.size(); ++n) {
      const SimShard::Trial& t = shards[j].trials[n];
      if (t.start > at) continue;
      ++me.shared_taken;
      const std::int64_t key = ForeignKey(j, static_cast<std::int64_t>(n));
      if (t.end > at) {
        me.history.running[key] = t.params;
        me.shared_running.push_back(key);
      } else if (me.seen.insert(key).second) {
        TrialRecord r;
        r.number = key;
        r.state = TrialState::kComplete;
        r.params = t.params;
        r.value = t.regret;
        fresh.emplace_back(t.end, std::move(r));
      }
    }
  }
  std::sort(fresh.begin(), fresh.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [end, r] : fresh) me.history.finished.push_back(std::move(r));
  me.last_read = at;
}

struct Event {
  double time;
  size_t shard;
  std::int64_t number;
  bool operator>(const Event& o) const { return time > o.time; }
};

// Runs the shards until no trial is left to hand out; returns the best regret over all their
// trials and how many ran.
std::pair<double, std::int64_t> Simulate(std::vector<SimShard>& shards, const Problem& problem, double share_every,
                                         std::uint64_t seed) {
  SplitMix64 durations(seed * 7919 + 13);
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  const auto dispatch = [&](size_t s, double now) {
    SimShard& sh = shards[s];
    if (sh.shares) {
      const double tick = sh.phase + std::floor((now - sh.phase) / share_every) * share_every;
      const double at = now < sh.phase ? 0.0 : tick;  // the read before the first trial, at the start
      if (at != sh.last_read) ReadSiblings(shards, s, at);
    }
    while (sh.busy < sh.workers) {
      const std::int64_t own = static_cast<std::int64_t>(sh.trials.size());
      if (own + sh.shared_taken >= sh.budget) return;
      const std::int64_t number = sh.next++;
      std::optional<ParamSet> params = sh.sampler->Ask(number, sh.history);
      if (!params) return;
      SimShard::Trial t;
      t.params = *params;
      t.start = now;
      t.end = now + 0.5 + durations.Uniform();
      t.regret = problem.regret(t.params);
      sh.history.running[number] = t.params;
      events.push({t.end, s, number});
      sh.trials.push_back(std::move(t));
      ++sh.busy;
    }
  };
  for (size_t s = 0; s < shards.size(); ++s) dispatch(s, 0.0);
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    SimShard& sh = shards[e.shard];
    SimShard::Trial& t = sh.trials[static_cast<size_t>(e.number)];
    t.done = true;
    --sh.busy;
    ++sh.own_finished;
    sh.history.running.erase(e.number);
    TrialRecord r;
    r.number = e.number;
    r.state = TrialState::kComplete;
    r.params = t.params;
    r.value = t.regret;
    sh.history.finished.push_back(std::move(r));
    dispatch(e.shard, e.time);
  }
  double best = 1e300;
  std::int64_t ran = 0;
  for (const SimShard& sh : shards) {
    for (const SimShard::Trial& t : sh.trials) best = std::min(best, t.regret);
    ran += static_cast<std::int64_t>(sh.trials.size());
  }
  return {best, ran};
}

SimShard MakeShard(const StudyConfig& config, int workers, std::int64_t budget, bool shares) {
  SimShard sh;
  sh.sampler = MakeSampler(config).value();
  sh.workers = workers;
  sh.budget = budget;
  sh.shares = shares;
  return sh;
}

nlohmann::json RunMode(const std::string& mode, const std::string& name, const Problem& problem,
                       const std::string& sampler, std::uint64_t seed, std::int64_t trials, double share_every,
                       const std::string& tag) {
  std::vector<SimShard> shards;
  constexpr int kShards = 4;
  if (mode == "single") {
    shards.push_back(MakeShard(Config(sampler, seed, problem, trials, ""), kShards, trials, false));
  } else if (mode == "sharing" || mode == "independent") {
    SplitMix64 phases(seed + 101);
    for (int k = 0; k < kShards; ++k) {
      const StudyConfig config =
          Config(sampler, seed, problem, trials, std::to_string(k) + "/" + std::to_string(kShards));
      const bool shares = mode == "sharing";
      shards.push_back(MakeShard(config, 1, shares ? trials : ShardSize(config.study.shard, trials), shares));
      shards.back().phase = phases.Uniform() * share_every;
    }
  } else if (mode == "cold") {
    shards.push_back(MakeShard(Config(sampler, seed, problem, trials, ""), 1, trials, false));
  } else if (mode == "warm") {
    std::vector<SimShard> source;
    source.push_back(MakeShard(Config(sampler, seed + 1'000'003, problem, trials, ""), 1, trials / 2, false));
    Simulate(source, problem, share_every, seed + 1'000'003);
    shards.push_back(MakeShard(Config(sampler, seed, problem, trials, ""), 1, trials / 2, false));
    for (size_t n = 0; n < source[0].trials.size(); ++n) {
      TrialRecord r;
      r.number = ForeignKey(7, static_cast<std::int64_t>(n));
      r.state = TrialState::kComplete;
      r.params = source[0].trials[n].params;
      r.value = source[0].trials[n].regret;
      shards[0].history.finished.push_back(std::move(r));
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    std::exit(2);
  }
  const auto [best, ran] = Simulate(shards, problem, share_every, seed);
  return {{"problem", name}, {"sampler", sampler}, {"mode", mode},  {"label", mode + tag},
          {"seed", seed},    {"regret", best},     {"trials", ran}, {"share_every", share_every}};
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) {
  cleansweep::KeepFreedMemoryMapped();
  CLI::App app{"cleansweep: search quality of shards that share, on a virtual clock"};
  std::string problems = "hpolib_protein_structure,hartmann6", samplers = "tpe",
              modes = "single,sharing,independent,cold,warm";
  std::string tag;
  std::string hpolib = std::getenv("HPOLIB_DIR") ? std::getenv("HPOLIB_DIR") : "../shared/benchmarks/hpolib";
  int seeds = 10, first_seed = 0;
  std::int64_t trials = 100;
  double share_every = 0.1;
  app.add_option("--problems", problems, "hartmann6, hpolib_<data set>, comma-separated");
  app.add_option("--samplers", samplers, "model-based samplers, comma-separated");
  app.add_option("--modes", modes, "single, sharing, independent, cold, warm");
  app.add_option("--seeds", seeds)->check(CLI::PositiveNumber);
  app.add_option("--first-seed", first_seed);
  app.add_option("--trials", trials, "the sweep's n_trials")->check(CLI::Range(8, 100000));
  app.add_option("--share-every", share_every, "time between two reads, in mean trial durations")
      ->check(CLI::PositiveNumber);
  app.add_option("--tag", tag, "added to each line's label (\"-stale\": label sharing-stale)");
  app.add_option("--hpolib", hpolib, "the folder of the HPOLib tables");
  CLI11_PARSE(app, argc, argv);
  for (const std::string& name : cleansweep::Split(problems)) {
    const cleansweep::Problem problem = cleansweep::MakeProblem(name, hpolib);
    for (const std::string& sampler : cleansweep::Split(samplers)) {
      for (const std::string& mode : cleansweep::Split(modes)) {
        for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
          const nlohmann::json line = cleansweep::RunMode(mode, name, problem, sampler,
                                                          static_cast<std::uint64_t>(seed), trials, share_every, tag);
          std::printf("%s\n", line.dump().c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}
