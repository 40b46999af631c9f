#include "config/study_config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "config/sampler_choice.hpp"
#include "config/space_parser.hpp"
#include "config/yaml_reader.hpp"
#include "util/byte_size.hpp"
#include "util/number_format.hpp"

namespace cleansweep {
namespace {

// Applies "a.b.c=value" to `root`, creating maps on the way; records "a.b.c" in `keys`.
Status ApplyOverride(const std::string& text, YAML::Node root, std::set<std::string>* keys) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidInput("--set " + text + ": expected KEY=VALUE, e.g. --set study.n_trials=8");
  }
  const std::string key = text.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput("--set " + key + ": value is not valid YAML: " + e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream stream(key);
  for (std::string part; std::getline(stream, part, '.');) {
    if (part.empty()) return Status::InvalidInput("--set " + key + ": empty key segment");
    parts.push_back(part);
  }
  std::vector<YAML::Node> path{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = path.back()[parts[i]];
    if (child.IsDefined() && !child.IsMap()) {
      return Status::InvalidInput("--set " + key + ": '" + parts[i] + "' is not a section");
    }
    path.push_back(child);
  }
  path.back()[parts.back()] = value;
  keys->insert(key);
  return Status::Ok();
}

std::string RecordedMetricList() {
  std::string list;
  for (const char* name : kRecordedMetrics) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

// study.metrics: [{name: ..., direction: ...}, ...], instead of metric and direction.
Status ParseMetrics(const YamlReader& r, const YAML::Node& node, StudyOptions* out) {
  const YAML::Node list = node["metrics"];
  if (node["metric"] || node["direction"]) {
    return r.Error(list, "study.metrics",
                   "give either metrics (a list) or metric and direction (one metric), not both");
  }
  if (!list.IsSequence() || list.size() == 0) {
    return r.Error(list, "study.metrics",
                   "must be a list of {name: ..., direction: minimize|maximize}, e.g. [{name: val_accuracy, "
                   "direction: maximize}, {name: latency_ms, direction: minimize}]");
  }
  out->metrics.clear();
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string key = "study.metrics[" + std::to_string(i) + "]";
    CS_RETURN_IF_ERROR(r.ExpectMap(list[i], key));
    CS_RETURN_IF_ERROR(r.CheckKeys(list[i], key, {"name", "direction"}));
    const ConfigSection item(r, list[i], key);
    if (!item.Has("name") || !item.Has("direction")) return r.Error(list[i], key, "needs a name and a direction");
    Metric metric;
    CS_RETURN_IF_ERROR(item.Read("name", &metric.name));
    if (!IsIdentifier(metric.name) || metric.name.size() > 64) {
      return item.Error("name", "'" + metric.name +
                                    "' is not a metric name: letters, digits and _ (not first), at most 64 (it "
                                    "becomes the column value_" +
                                    metric.name + ")");
    }
    if (!seen.insert(metric.name).second) return item.Error("name", "'" + metric.name + "' is named twice");
    std::string direction;
    CS_RETURN_IF_ERROR(item.Read("direction", &direction));
    if (direction != "minimize" && direction != "maximize") {
      return item.Error("direction", "must be minimize or maximize, got '" + direction + "'");
    }
    metric.direction = direction == "maximize" ? Direction::kMaximize : Direction::kMinimize;
    out->metrics.push_back(std::move(metric));
  }
  if (IsRecordedMetric(out->metrics.front().name)) {
    return r.Error(list[0], "study.metrics[0]",
                   "the first metric must be one the trial reports (pruning and progress use it); '" +
                       out->metrics.front().name + "' is a recorded figure (" + RecordedMetricList() +
                       "): list it later");
  }
  out->metric = out->metrics.front().name;
  out->direction = out->metrics.front().direction;
  return Status::Ok();
}

// study.constraints: {NAME: {min: X, max: Y}, ...} over the metrics and the recorded figures.
Status ParseConstraints(const YamlReader& r, const YAML::Node& node, StudyOptions* out) {
  CS_RETURN_IF_ERROR(r.ExpectMap(node, "study.constraints"));
  for (const auto& item : node) {
    Constraint c;
    c.name = item.first.Scalar();
    const std::string key = "study.constraints." + c.name;
    const bool metric =
        std::any_of(out->metrics.begin(), out->metrics.end(), [&](const Metric& m) { return m.name == c.name; });
    if (!metric && !IsRecordedMetric(c.name)) {
      std::string known;
      for (const Metric& m : out->metrics) known += (known.empty() ? "" : ", ") + m.name;
      return r.Error(item.first, key,
                     "not a metric of this study (" + known + ") nor a recorded figure (" + RecordedMetricList() + ")");
    }
    CS_RETURN_IF_ERROR(r.ExpectMap(item.second, key));
    CS_RETURN_IF_ERROR(r.CheckKeys(item.second, key, {"min", "max"}));
    const ConfigSection bound(r, item.second, key);
    for (const auto& [name, field] : {std::pair{"min", &c.min}, std::pair{"max", &c.max}}) {
      if (!bound.Has(name)) continue;
      double v = 0;
      CS_RETURN_IF_ERROR(bound.Read(name, &v));
      if (!std::isfinite(v)) return bound.Error(name, "must be a finite number");
      *field = v;
    }
    if (!c.min && !c.max) return r.Error(item.second, key, "give min, max or both");
    if (c.min && c.max && *c.min > *c.max) return bound.Error("min", "is above max");
    out->constraints.push_back(std::move(c));
  }
  return Status::Ok();
}

Status ParseStudy(const YamlReader& r, const YAML::Node& node, StudyOptions* out) {
  if (!node) return r.Error(node, "study", "missing: a config needs a `study:` section with at least a name");
  CS_RETURN_IF_ERROR(
      r.CheckKeys(node, "study",
                  {"name", "direction", "metric", "metrics", "constraints", "n_trials", "time_budget", "stop_when",
                   "storage", "shard", "report_every", "trials_dir", "share_every", "warm_start"}));
  if (!node["name"]) return r.Error(node, "study.name", "missing: every study needs a name");
  Result<std::string> name = r.String(node["name"], "study.name");
  if (!name.ok()) return name.status();
  if (name->empty() || name->find('/') != std::string::npos) {
    return r.Error(node["name"], "study.name", "must be non-empty and contain no '/'");
  }
  out->name = *name;
  const ConfigSection study(r, node, "study");
  std::string direction = DirectionName(out->direction);
  CS_RETURN_IF_ERROR(study.Read("direction", &direction));
  if (direction != "minimize" && direction != "maximize") {
    return study.Error("direction", "must be minimize or maximize, got '" + direction + "'");
  }
  out->direction = direction == "maximize" ? Direction::kMaximize : Direction::kMinimize;
  CS_RETURN_IF_ERROR(study.Read("metric", &out->metric));
  out->metrics = {Metric{out->metric, out->direction}};
  if (study.Has("metrics")) CS_RETURN_IF_ERROR(ParseMetrics(r, node, out));
  if (study.Has("constraints")) CS_RETURN_IF_ERROR(ParseConstraints(r, node["constraints"], out));
  CS_RETURN_IF_ERROR(study.Read("n_trials", &out->n_trials, 1));
  CS_RETURN_IF_ERROR(study.Read("time_budget", &out->time_budget, Millis(1)));
  if (study.Has("stop_when")) {
    CS_RETURN_IF_ERROR(r.CheckKeys(node["stop_when"], "study.stop_when", {"no_improvement", "target"}));
    const ConfigSection stop(r, node["stop_when"], "study.stop_when");
    if (!stop.Has("no_improvement") && !stop.Has("target")) {
      return study.Error("stop_when", "give no_improvement (trials without a new best), target (a value), or both");
    }
    if (stop.Has("no_improvement")) {
      std::int64_t n = 0;
      CS_RETURN_IF_ERROR(stop.Read("no_improvement", &n, 1));
      out->stop_when.no_improvement = n;
    }
    if (stop.Has("target")) {
      if (out->multi_objective()) {
        return stop.Error("target", "applies to a study of one metric; this one has " +
                                        std::to_string(out->metrics.size()) + " (use no_improvement)");
      }
      double target = 0;
      CS_RETURN_IF_ERROR(stop.Read("target", &target));
      if (!std::isfinite(target)) return stop.Error("target", "must be a finite number");
      out->stop_when.target = target;
    }
  }
  out->storage = "results/" + out->name + ".h5";
  CS_RETURN_IF_ERROR(study.Read("storage", &out->storage));
  if (out->storage.empty()) return study.Error("storage", "must be a file path");
  CS_RETURN_IF_ERROR(study.Read("trials_dir", &out->trials_dir));
  if (study.Has("trials_dir") && out->trials_dir.empty()) return study.Error("trials_dir", "must be a folder path");
  CS_RETURN_IF_ERROR(study.Read("report_every", &out->report_every, Millis(1000)));
  if (study.Has("shard")) {
    std::string text;
    CS_RETURN_IF_ERROR(study.Read("shard", &text));
    Result<Shard> shard = ParseShard(text);
    if (!shard.ok()) return study.Error("shard", shard.status().message());
    out->shard = *shard;
    out->storage = ShardStoragePath(out->storage, out->shard);
  }
  CS_RETURN_IF_ERROR(study.Read("share_every", &out->share_every));
  if (study.Has("warm_start")) {
    const YAML::Node list = node["warm_start"];
    if (!list.IsSequence() && !list.IsScalar()) {
      return study.Error("warm_start", "must be a study file or a list of them, e.g. [results/earlier.h5]");
    }
    const auto add = [&](const YAML::Node& item) -> Status {
      Result<std::string> path = r.String(item, "study.warm_start");
      if (!path.ok()) return path.status();
      if (path->empty()) return r.Error(item, "study.warm_start", "must be study file paths, not empty text");
      if (std::find(out->warm_start.begin(), out->warm_start.end(), *path) != out->warm_start.end()) {
        return r.Error(item, "study.warm_start", "names " + *path + " twice");
      }
      out->warm_start.push_back(*path);
      return Status::Ok();
    };
    if (list.IsScalar()) {
      CS_RETURN_IF_ERROR(add(list));
    } else {
      for (const YAML::Node& item : list) CS_RETURN_IF_ERROR(add(item));
    }
  }
  return Status::Ok();
}

// Which sampler keys each kind takes, besides kind and seed.
const std::map<std::string, std::set<std::string>>& SamplerKeys() {
  static const std::map<std::string, std::set<std::string>> keys = {
      {"auto", {}},
      {"random", {}},
      {"grid", {}},
      {"tpe",
       {"n_startup_trials", "n_ei_candidates", "gamma", "gamma_max", "prior_weight", "multivariate", "constant_liar"}},
      {"gp", {"n_startup_trials", "n_candidates", "n_local_searches", "max_points", "deterministic", "fantasize"}},
      {"sobol", {"scramble"}},
      {"cmaes", {"n_startup_trials", "sigma0", "popsize"}},
      {"nsga2", {"population_size", "crossover_prob", "swapping_prob", "mutation_prob"}},
      {"pbt", {"population", "interval", "quantile", "perturb", "resample_probability"}},
  };
  return keys;
}

// Samplers that search several metrics at once; the others model one objective.
bool AcceptsSeveralMetrics(const std::string& kind) {
  return kind == "random" || kind == "grid" || kind == "sobol" || kind == "nsga2" || kind == "tpe";
}

Status ParsePbt(const YamlReader& r, const ConfigSection& sampler, SamplerOptions* out) {
  if (out->kind != "pbt") return Status::Ok();
  CS_RETURN_IF_ERROR(sampler.Read("population", &out->population, 2, 1'000'000));
  if (!sampler.Has("interval")) {
    return sampler.Error("kind", "pbt needs sampler.interval: the steps a member trains between its checks");
  }
  CS_RETURN_IF_ERROR(sampler.Read("interval", &out->interval, 1));
  CS_RETURN_IF_ERROR(sampler.Read("quantile", &out->quantile));
  if (!(out->quantile > 0 && out->quantile <= 0.5)) return sampler.Error("quantile", "must be in (0, 0.5]");
  CS_RETURN_IF_ERROR(sampler.Read("resample_probability", &out->resample_probability));
  if (!(out->resample_probability >= 0 && out->resample_probability <= 1)) {
    return sampler.Error("resample_probability", "must be in [0, 1]");
  }
  if (sampler.Has("perturb")) {
    const YAML::Node list = sampler["perturb"];
    if (!list.IsSequence() || list.size() == 0) {
      return sampler.Error("perturb", "must be a list of factors, such as [0.8, 1.2]");
    }
    out->perturb.clear();
    for (const YAML::Node& factor : list) {
      Result<double> f = r.Number(factor, sampler.Key("perturb"));
      if (!f.ok()) return f.status();
      if (!(*f > 0 && std::isfinite(*f))) return r.Error(factor, sampler.Key("perturb"), "factors must be > 0");
      out->perturb.push_back(*f);
    }
  }
  return Status::Ok();
}

Status ParseSampler(const YamlReader& r, const YAML::Node& node, bool several_metrics, SamplerOptions* out) {
  // Several metrics: independent densities unless asked (docs/samplers.md, "Multi-objective TPE").
  if (several_metrics) out->multivariate = false;
  if (!node) return Status::Ok();
  CS_RETURN_IF_ERROR(r.CheckKeys(node, "sampler",
                                 {"kind",
                                  "seed",
                                  "n_startup_trials",
                                  "n_ei_candidates",
                                  "gamma",
                                  "gamma_max",
                                  "prior_weight",
                                  "multivariate",
                                  "constant_liar",
                                  "n_candidates",
                                  "n_local_searches",
                                  "max_points",
                                  "deterministic",
                                  "fantasize",
                                  "scramble",
                                  "sigma0",
                                  "popsize",
                                  "population_size",
                                  "crossover_prob",
                                  "swapping_prob",
                                  "mutation_prob",
                                  "population",
                                  "interval",
                                  "quantile",
                                  "perturb",
                                  "resample_probability"}));
  const ConfigSection sampler(r, node, "sampler");
  CS_RETURN_IF_ERROR(sampler.Read("kind", &out->kind));
  if (!SamplerKeys().count(out->kind)) {
    return sampler.Error("kind", "unknown sampler '" + out->kind +
                                     "' (available: auto, random, grid, tpe, gp, sobol, cmaes, nsga2, pbt)");
  }
  const std::set<std::string>& allowed = SamplerKeys().at(out->kind);
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    if (key != "kind" && key != "seed" && !allowed.count(key)) {
      if (out->kind == "auto") {
        return r.Error(item.first, "sampler." + key,
                       "does not apply to kind auto, which picks the sampler itself; name one (kind: gp, tpe, ...) "
                       "to tune its settings");
      }
      return r.Error(item.first, "sampler." + key, "does not apply to the " + out->kind + " sampler");
    }
  }
  std::int64_t seed = 0;
  CS_RETURN_IF_ERROR(sampler.Read("seed", &seed, 0));
  out->seed = static_cast<std::uint64_t>(seed);
  if (out->kind == "cmaes") out->n_startup_trials = 0;
  constexpr std::int64_t kMaxCount = 1'000'000;
  CS_RETURN_IF_ERROR(sampler.Read("n_startup_trials", &out->n_startup_trials, 0, kMaxCount));
  CS_RETURN_IF_ERROR(sampler.Read("n_ei_candidates", &out->n_ei_candidates, 1, kMaxCount));
  CS_RETURN_IF_ERROR(sampler.Read("gamma_max", &out->gamma_max, 1, kMaxCount));
  CS_RETURN_IF_ERROR(sampler.Read("popsize", &out->popsize, 2, kMaxCount));
  CS_RETURN_IF_ERROR(sampler.Read("n_candidates", &out->n_candidates, 1, kMaxCount));
  CS_RETURN_IF_ERROR(sampler.Read("n_local_searches", &out->n_local_searches, 0, 1000));
  CS_RETURN_IF_ERROR(sampler.Read("max_points", &out->max_points, 20, 100'000));
  CS_RETURN_IF_ERROR(sampler.Read("deterministic", &out->deterministic));
  CS_RETURN_IF_ERROR(sampler.Read("fantasize", &out->fantasize));
  for (const auto& [key, field] : {std::pair{"gamma", &out->gamma}, std::pair{"sigma0", &out->sigma0}}) {
    CS_RETURN_IF_ERROR(sampler.Read(key, field));
    if (sampler.Has(key) && !(*field > 0 && *field <= 1)) return sampler.Error(key, "must be in (0, 1]");
  }
  CS_RETURN_IF_ERROR(sampler.Read("multivariate", &out->multivariate));
  CS_RETURN_IF_ERROR(sampler.Read("constant_liar", &out->constant_liar));
  CS_RETURN_IF_ERROR(sampler.Read("scramble", &out->scramble));
  CS_RETURN_IF_ERROR(sampler.Read("prior_weight", &out->prior_weight));
  if (sampler.Has("prior_weight") && !(out->prior_weight > 0)) return sampler.Error("prior_weight", "must be > 0");
  CS_RETURN_IF_ERROR(sampler.Read("population_size", &out->population_size, 2, kMaxCount));
  for (const auto& [key, field] :
       {std::pair{"crossover_prob", &out->crossover_prob}, std::pair{"swapping_prob", &out->swapping_prob},
        std::pair{"mutation_prob", &out->mutation_prob}}) {
    CS_RETURN_IF_ERROR(sampler.Read(key, field));
    if (sampler.Has(key) && !(*field >= 0 && *field <= 1)) return sampler.Error(key, "must be in [0, 1]");
  }
  if (sampler.Has("mutation_prob") && out->mutation_prob == 0) {
    return sampler.Error("mutation_prob", "must be in (0, 1]; leave it out for 1 / (number of parameters)");
  }
  return ParsePbt(r, sampler, out);
}

Status ParsePruner(const YamlReader& r, const YAML::Node& node, PrunerOptions* out) {
  if (!node) return Status::Ok();
  static const std::map<std::string, std::set<std::string>> kKeys = {
      {"none", {}},
      {"median", {"n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"}},
      {"asha", {"min_resource", "max_resource", "reduction_factor", "min_early_stopping_rate", "resume"}},
      {"hyperband", {"min_resource", "max_resource", "reduction_factor", "resume"}},
  };
  CS_RETURN_IF_ERROR(
      r.CheckKeys(node, "pruner",
                  {"kind", "n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials", "min_resource",
                   "max_resource", "reduction_factor", "min_early_stopping_rate", "resume"}));
  const ConfigSection pruner(r, node, "pruner");
  CS_RETURN_IF_ERROR(pruner.Read("kind", &out->kind));
  if (!kKeys.count(out->kind)) {
    return pruner.Error("kind", "unknown pruner '" + out->kind + "' (available: none, median, asha, hyperband)");
  }
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    if (key != "kind" && !kKeys.at(out->kind).count(key)) {
      return r.Error(item.first, "pruner." + key, "does not apply to the " + out->kind + " pruner");
    }
  }
  if (out->reduction_factor == 0) out->reduction_factor = out->kind == "hyperband" ? 3 : 4;
  std::int64_t reduction = out->reduction_factor, rate = out->min_early_stopping_rate;
  CS_RETURN_IF_ERROR(pruner.Read("n_startup_trials", &out->n_startup_trials, 0));
  CS_RETURN_IF_ERROR(pruner.Read("n_warmup_steps", &out->n_warmup_steps, 0));
  CS_RETURN_IF_ERROR(pruner.Read("interval_steps", &out->interval_steps, 1));
  CS_RETURN_IF_ERROR(pruner.Read("n_min_trials", &out->n_min_trials, 1));
  CS_RETURN_IF_ERROR(pruner.Read("min_resource", &out->min_resource, 1));
  CS_RETURN_IF_ERROR(pruner.Read("max_resource", &out->max_resource, 1));
  CS_RETURN_IF_ERROR(pruner.Read("reduction_factor", &reduction, 2));
  CS_RETURN_IF_ERROR(pruner.Read("min_early_stopping_rate", &rate, 0));
  CS_RETURN_IF_ERROR(pruner.Read("resume", &out->resume));
  out->reduction_factor = static_cast<int>(std::min<std::int64_t>(reduction, 1000));
  out->min_early_stopping_rate = static_cast<int>(std::min<std::int64_t>(rate, 60));
  if (out->kind == "hyperband" && out->max_resource == 0) {
    return r.Error(node, "pruner.max_resource", "hyperband needs max_resource: the last step a trial reports");
  }
  if (out->max_resource > 0 && out->max_resource <= out->min_resource) {
    return r.Error(node["max_resource"], "pruner.max_resource", "must be above min_resource");
  }
  return Status::Ok();
}

Status CheckPlaceholders(const YamlReader& r, const YAML::Node& node, const std::string& word, const std::string& key,
                         const SearchSpace& space) {
  Result<std::vector<std::string>> names = PlaceholdersIn(word);
  if (!names.ok()) return r.Error(node, key, names.status().message());
  for (const std::string& name : *names) {
    if (name != kPlaceholderTrial && name != kPlaceholderTrialDir && !space.Find(name)) {
      return r.Error(node, key,
                     "placeholder {" + name + "} names no parameter of the space (nor {trial}, {trial_dir})");
    }
  }
  return Status::Ok();
}

}  // namespace

int TrialOptions::GpusFor(const ParamSet& params) const {
  if (gpus_param.empty()) return gpus;
  const auto it = params.find(gpus_param);
  return it == params.end() ? gpus : std::max(1, static_cast<int>(std::lround(AsNumber(it->second))));
}

namespace {

// trial.gpus, trial.processes, trial.allow_split (docs/multi-gpu.md).
Status ParseGang(const YamlReader& r, const YAML::Node& node, const SearchSpace& space, TrialOptions* out) {
  const ConfigSection trial(r, node, "trial");
  const YAML::Node gpus = node["gpus"];
  out->distributed = static_cast<bool>(gpus);
  const std::string usage =
      "expected a number of GPUs (workers) per trial, 1 to " + std::to_string(kMaxGangSize) +
      ", or \"{name}\": a parameter of the space (an int, or a categorical of whole numbers) that chooses it per trial";
  if (gpus && gpus.IsScalar() && !gpus.Scalar().empty() && gpus.Scalar()[0] == '{') {
    const std::string& text = gpus.Scalar();
    const std::string name = text.size() > 2 && text.back() == '}' ? text.substr(1, text.size() - 2) : "";
    const ParamSpec* spec = space.Find(name);
    if (!spec) return trial.Error("gpus", "names no parameter of the space: " + usage);
    std::vector<double> sizes;
    bool whole = true;
    if (spec->kind == ParamKind::kInt) {
      sizes = {spec->low, spec->high};
    } else {
      for (const ParamValue& v :
           spec->kind == ParamKind::kFixed ? std::vector<ParamValue>{spec->fixed_value} : spec->choices) {
        if (const auto* i = std::get_if<std::int64_t>(&v)) {
          sizes.push_back(static_cast<double>(*i));
        } else {
          whole = false;
        }
      }
    }
    if (!whole || spec->kind == ParamKind::kFloat || SearchSpace::IsConditional(*spec)) {
      return trial.Error(
          "gpus", "parameter '" + name + "' cannot choose a trial's GPUs: " + usage +
                      (SearchSpace::IsConditional(*spec) ? " (and not conditional: every trial needs a size)" : ""));
    }
    const auto [low, high] = std::minmax_element(sizes.begin(), sizes.end());
    if (*low < 1 || *high > kMaxGangSize) {
      return trial.Error("gpus", "parameter '" + name + "' allows " + FormatDouble(*low < 1 ? *low : *high) +
                                     " GPUs per trial: " + usage);
    }
    out->gpus_param = name;
    out->max_gpus = static_cast<int>(*high);
  } else {
    if (!trial.Read("gpus", &out->gpus, 1, kMaxGangSize).ok()) return trial.Error("gpus", usage);
    out->max_gpus = out->gpus;
  }
  if (trial.Has("processes")) {
    std::string processes;
    CS_RETURN_IF_ERROR(trial.Read("processes", &processes));
    if (processes != "per_gpu" && processes != "single") {
      return trial.Error("processes",
                         "expected per_gpu (one process per GPU of the trial, RANK 0..K-1, as torchrun starts them) "
                         "or single (one process that sees all the trial's GPUs: torchrun inside it, or DataParallel)");
    }
    out->processes = processes == "single" ? GangProcesses::kSingle : GangProcesses::kPerGpu;
  }
  CS_RETURN_IF_ERROR(trial.Read("allow_split", &out->allow_split));
  if (out->processes == GangProcesses::kSingle && out->allow_split) {
    return trial.Error("allow_split",
                       "cannot be true with trial.processes: single (one process sees GPUs of one node)");
  }
  return Status::Ok();
}

Status ParseTrial(const YamlReader& r, const YAML::Node& node, const SearchSpace& space, TrialOptions* out) {
  if (!node) return r.Error(node, "trial", "missing: a config needs `trial: {command: [...]}`");
  CS_RETURN_IF_ERROR(r.CheckKeys(
      node, "trial", {"command",     "objective",    "python",         "launcher",        "timeout", "kill_grace",
                      "prune_grace", "stop_grace",   "log_limit_mb",   "tail_lines",      "env",     "retries",
                      "retry_on",    "memory_limit", "gpu_clean_wait", "prepare_timeout", "prefork", "checkpoint_keep",
                      "gpus",        "processes",    "allow_split"}));
  YAML::Node command;  // a null node when trial.command is absent (node[] of a missing key cannot be assigned to)
  if (node["command"]) command = node["command"];
  if (const YAML::Node objective = node["objective"]) {
    // An Optuna-style objective, run in a fresh python3 per trial (python/cleansweep_trial.py).
    Result<std::string> target = r.String(objective, "trial.objective");
    if (!target.ok()) return target.status();
    const size_t colon = target->rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == target->size()) {
      return r.Error(objective, "trial.objective",
                     "expected FILE.py:FUNCTION (or MODULE:FUNCTION), e.g. train.py:objective");
    }
    if (node["command"]) {
      return r.Error(command, "trial.command",
                     "give trial.objective or trial.command, not both (the objective's command is python3 -m "
                     "cleansweep_trial " +
                         *target + ")");
    }
    out->objective = *target;
    std::string python = "python3";  // the interpreter: a name on PATH, or a path (a venv's)
    if (const YAML::Node given = node["python"]) {
      Result<std::string> word = r.String(given, "trial.python");
      if (!word.ok()) return word.status();
      python = *word;
    }
    command = YAML::Node(YAML::NodeType::Sequence);
    command.push_back(python);
    for (const char* word : {"-m", "cleansweep_trial"}) command.push_back(word);
    command.push_back(*target);
  }
  if (node["python"] && !node["objective"]) {
    return r.Error(node["python"], "trial.python", "is the interpreter of trial.objective, which is not set");
  }
  if (!command || command.IsNull()) {
    return r.Error(node, "trial.command",
                   "missing: the program to run, e.g. [python3, train.py], or trial.objective: train.py:objective");
  }
  if (command.IsScalar()) {
    return r.Error(command, "trial.command", "expected a list of words, e.g. [python3, train.py, --epochs, \"3\"]");
  }
  if (!command.IsSequence() || command.size() == 0)
    return r.Error(command, "trial.command", "expected a non-empty list");
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string key = "trial.command[" + std::to_string(i) + "]";
    Result<std::string> word = r.String(command[i], key);
    if (!word.ok()) return word.status();
    CS_RETURN_IF_ERROR(CheckPlaceholders(r, command[i], *word, key, space));
    out->command.push_back(*word);
  }
  if (out->command[0].find('{') != std::string::npos) {
    return r.Error(command[0], "trial.command[0]", "the program itself cannot be a placeholder");
  }
  const ConfigSection trial(r, node, "trial");
  std::string launcher = out->launcher == LauncherKind::kForkServer ? "forkserver" : "spawn";
  CS_RETURN_IF_ERROR(trial.Read("launcher", &launcher));
  if (launcher != "spawn" && launcher != "forkserver") {
    return trial.Error("launcher",
                       "expected spawn (exec trial.command for every trial) or forkserver (fork every trial from a "
                       "server that loaded the plugin trial.command[0] once)");
  }
  out->launcher = launcher == "forkserver" ? LauncherKind::kForkServer : LauncherKind::kSpawn;
  if (!out->objective.empty() && out->launcher == LauncherKind::kForkServer) {
    return trial.Error("launcher",
                       "trial.objective runs a Python function in a fresh python3 per trial; the fork "
                       "server forks C++ plugins (docs/fork-server.md)");
  }
  CS_RETURN_IF_ERROR(trial.Read("timeout", &out->timeout, Millis(1)));
  CS_RETURN_IF_ERROR(trial.Read("kill_grace", &out->kill_grace));
  CS_RETURN_IF_ERROR(trial.Read("prune_grace", &out->prune_grace));
  CS_RETURN_IF_ERROR(trial.Read("gpu_clean_wait", &out->gpu_clean_wait));
  CS_RETURN_IF_ERROR(trial.Read("prepare_timeout", &out->prepare_timeout, Millis(1)));
  CS_RETURN_IF_ERROR(trial.Read("prefork", &out->prefork));
  if (out->prefork && trial.Has("prefork") && out->launcher == LauncherKind::kSpawn) {
    return trial.Error("prefork",
                       "needs trial.launcher: forkserver (a spawned trial execs its program, so there is nothing to "
                       "fork ahead of it)");
  }
  if (out->launcher == LauncherKind::kSpawn) out->prefork = false;
  CS_RETURN_IF_ERROR(trial.Read("stop_grace", &out->stop_grace));
  CS_RETURN_IF_ERROR(trial.Read("retries", &out->retries, 0, 100));
  if (trial.Has("checkpoint_keep")) {
    std::string keep;
    CS_RETURN_IF_ERROR(trial.Read("checkpoint_keep", &keep));
    if (keep != "last" && keep != "all" && keep != "none") {
      return trial.Error("checkpoint_keep",
                         "expected last (a trial keeps its latest checkpoint), all, or none (a trial's checkpoints "
                         "go when it has ended for good)");
    }
    out->checkpoint_keep = keep == "all"    ? CheckpointKeep::kAll
                           : keep == "none" ? CheckpointKeep::kNone
                                            : CheckpointKeep::kLast;
  }
  CS_RETURN_IF_ERROR(ParseGang(r, node, space, out));
  if (node["retry_on"]) {
    const YAML::Node list = node["retry_on"];
    if (!list.IsSequence()) {
      return r.Error(list, "trial.retry_on", "expected a list of states, e.g. [crash, timeout, oom_gpu]");
    }
    out->retry_on.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "trial.retry_on[" + std::to_string(i) + "]";
      Result<std::string> name = r.String(list[i], key);
      if (!name.ok()) return name.status();
      std::string upper = *name;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      TrialState state;
      if (!ParseTrialState(upper, &state) || state == TrialState::kRunning || state == TrialState::kComplete ||
          state == TrialState::kPruned || state == TrialState::kInterrupted) {
        return r.Error(list[i], key,
                       "unknown failure '" + *name + "' (retryable: fail, crash, oom_gpu, oom_host, timeout)");
      }
      out->retry_on.insert(state);
    }
  }
  if (trial.Has("memory_limit")) {
    std::string text;
    CS_RETURN_IF_ERROR(trial.Read("memory_limit", &text));
    Result<std::int64_t> bytes = ParseByteSize(text);
    if (!bytes.ok()) return trial.Error("memory_limit", bytes.status().message());
    if (*bytes < (16 << 20)) return trial.Error("memory_limit", "must be at least 16M (no program starts in less)");
    out->memory_limit_bytes = *bytes;
  }
  std::int64_t log_limit_mb = out->log_limit_bytes >> 20;
  CS_RETURN_IF_ERROR(trial.Read("log_limit_mb", &log_limit_mb, 1, std::int64_t{1} << 30));
  out->log_limit_bytes = log_limit_mb << 20;
  CS_RETURN_IF_ERROR(trial.Read("tail_lines", &out->tail_lines, 0, 1000));
  if (node["env"]) {
    CS_RETURN_IF_ERROR(r.ExpectMap(node["env"], "trial.env"));
    for (const auto& item : node["env"]) {
      Result<std::string> v = r.String(item.second, "trial.env." + item.first.Scalar());
      if (!v.ok()) return v.status();
      out->env[item.first.Scalar()] = *v;
    }
  }
  return Status::Ok();
}

Status ParseWorkers(const YamlReader& r, const YAML::Node& node, WorkerOptions* out) {
  if (!node) return Status::Ok();
  CS_RETURN_IF_ERROR(r.CheckKeys(node, "workers", {"gpus", "queue", "backfill"}));
  CS_RETURN_IF_ERROR(ConfigSection(r, node, "workers").Read("backfill", &out->backfill));
  if (const YAML::Node queue = node["queue"]; queue && !(queue.IsScalar() && queue.Scalar() == "auto")) {
    int depth = 0;
    const ConfigSection workers(r, node, "workers");
    if (!workers.Read("queue", &depth, 0, kMaxWorkerQueue).ok()) {
      return workers.Error("queue",
                           "expected auto (queue one trial per busy worker while trials are short), 0 "
                           "(never) or a count of trials up to " +
                               std::to_string(kMaxWorkerQueue));
    }
    out->queue = depth;
  }
  const YAML::Node gpus = node["gpus"];
  if (!gpus) return Status::Ok();
  if (gpus.IsScalar() && (gpus.Scalar() == "auto" || gpus.Scalar() == "none")) {
    out->gpus = gpus.Scalar();
    return Status::Ok();
  }
  if (!gpus.IsSequence() || gpus.size() == 0) {
    return r.Error(gpus, "workers.gpus", "expected auto, none or a list of device ids such as [0, 1]");
  }
  out->gpus.clear();
  for (size_t i = 0; i < gpus.size(); ++i) {
    Result<std::string> id = r.String(gpus[i], "workers.gpus[" + std::to_string(i) + "]");
    if (!id.ok()) return id.status();
    if (id->empty() || id->find(',') != std::string::npos) {
      return r.Error(gpus[i], "workers.gpus", "device ids are single numbers or UUIDs");
    }
    out->gpus += (i ? "," : "") + *id;
  }
  return Status::Ok();
}

Status ParseEnqueue(const YamlReader& r, const YAML::Node& node, const StudyConfig& config,
                    std::vector<ParamSet>* out) {
  if (!node) return Status::Ok();
  if (!node.IsSequence()) return r.Error(node, "enqueue", "expected a list of configurations, e.g. [{lr: 0.01}]");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string key = "enqueue[" + std::to_string(i) + "]";
    CS_RETURN_IF_ERROR(r.ExpectMap(node[i], key));
    ParamSet entry;
    for (const auto& item : node[i]) {
      const std::string name = item.first.Scalar(), item_key = key + "." + name;
      const ParamSpec* spec = config.space.Find(name);
      if (!spec) return r.Error(item.first, item_key, "names no parameter of the space");
      Result<ParamValue> value = r.Scalar(item.second, item_key);
      if (!value.ok()) return value.status();
      Result<ParamValue> normal = SearchSpace::Normalize(*spec, *value);
      if (!normal.ok()) return r.Error(item.second, item_key, normal.status().message());
      entry[name] = *normal;
    }
    for (const auto& [name, value] : entry) {  // a value for a parameter its own entry switches off
      const ParamSpec& spec = *config.space.Find(name);
      bool parents_given = true;
      for (const Condition& c : spec.when) parents_given = parents_given && entry.count(c.parent);
      if (parents_given && !SearchSpace::IsActive(spec, entry)) {
        return r.Error(node[i][name], key + "." + name, "is inactive with the other values of this entry");
      }
    }
    out->push_back(std::move(entry));
  }
  if (static_cast<std::int64_t>(out->size()) > config.study.n_trials) {
    return r.Error(node, "enqueue",
                   std::to_string(out->size()) + " configurations, but study.n_trials is " +
                       std::to_string(config.study.n_trials));
  }
  return Status::Ok();
}

}  // namespace

bool IsRecordedMetric(const std::string& name) {
  for (const char* recorded : kRecordedMetrics) {
    if (name == recorded) return true;
  }
  return false;
}

double RecordedFigure(const std::string& name, const TrialRecord& r) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (name == "trial_seconds") return r.state == TrialState::kRunning ? nan : r.duration();
  if (name == "cpu_seconds") return r.cpu_seconds;
  if (name == "gpu_seconds") return r.gpu_seconds;
  if (name == "energy_j") return r.energy_j;
  if (name == "peak_rss_mb") return r.peak_rss_kb > 0 ? static_cast<double>(r.peak_rss_kb) / 1024 : nan;
  if (name == "gpu_mem_peak_mb") return r.gpu_mem_peak_mb;
  CS_CHECK(false && "not a recorded metric");
  return nan;
}

void StudyOptions::FillValues(const std::vector<double>& reported, TrialRecord* record) const {
  record->values.clear();
  if (!multi_objective() || record->state != TrialState::kComplete) return;
  size_t next_reported = 0;
  std::string unknown;
  for (const Metric& m : metrics) {
    double v = std::numeric_limits<double>::quiet_NaN();
    if (!IsRecordedMetric(m.name)) {
      if (next_reported < reported.size()) v = reported[next_reported];
      ++next_reported;
    } else {
      v = RecordedFigure(m.name, *record);
      if (!std::isfinite(v)) unknown += (unknown.empty() ? "" : ", ") + m.name;
    }
    record->values.push_back(v);
  }
  if (!unknown.empty()) {
    record->state = TrialState::kFail;
    record->reason = "its metric " + unknown +
                     " is unknown on this worker (energy_j needs NVML and a GPU that counts energy; "
                     "gpu_mem_peak_mb needs a GPU): its reported values are kept";
  }
}

double StudyOptions::ConstrainedValue(const Constraint& c, const TrialRecord& record) const {
  double v = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].name != c.name) continue;
    if (i < record.values.size()) {
      v = record.values[i];
    } else if (i == 0 && record.value) {
      v = *record.value;
    }
  }
  if (std::isnan(v) && IsRecordedMetric(c.name)) v = RecordedFigure(c.name, record);
  return v;
}

double StudyOptions::Violation(const TrialRecord& record) const {
  if (constraints.empty() || record.state != TrialState::kComplete) return std::numeric_limits<double>::quiet_NaN();
  double total = 0;
  for (const Constraint& c : constraints) {
    const double v = ConstrainedValue(c, record);
    if (!std::isfinite(v)) {
      total += 1;
      continue;
    }
    if (c.min && v < *c.min) total += (*c.min - v) / std::max(1.0, std::abs(*c.min));
    if (c.max && v > *c.max) total += (v - *c.max) / std::max(1.0, std::abs(*c.max));
  }
  return total;
}

std::string StudyOptions::DescribeMetrics() const {
  std::string out;
  for (const Metric& m : metrics)
    out += (out.empty() ? "" : ", ") + std::string(DirectionName(m.direction)) + " " + m.name;
  return out;
}

std::vector<std::string> StudyOptions::ReportedMetrics() const {
  std::vector<std::string> out;
  for (const Metric& m : metrics) {
    if (!IsRecordedMetric(m.name)) out.push_back(m.name);
  }
  return out;
}

const char* DirectionName(Direction direction) { return direction == Direction::kMaximize ? "maximize" : "minimize"; }

std::string TrialsRoot(const StudyOptions& study) {
  const std::filesystem::path storage = std::filesystem::absolute(study.storage);
  const std::filesystem::path parent =
      study.trials_dir.empty() ? storage.parent_path() : std::filesystem::absolute(study.trials_dir);
  return (parent / storage.stem()).string() + ".trials";
}

Result<std::vector<std::string>> PlaceholdersIn(const std::string& word) {
  std::vector<std::string> names;
  for (size_t i = 0; i < word.size(); ++i) {
    if ((word[i] == '{' || word[i] == '}') && i + 1 < word.size() && word[i + 1] == word[i]) {
      ++i;
      continue;
    }
    if (word[i] == '}') return Status::InvalidInput("unmatched '}' in '" + word + "' (write }} for a literal brace)");
    if (word[i] != '{') continue;
    const size_t close = word.find('}', i);
    if (close == std::string::npos) {
      return Status::InvalidInput("unclosed '{' in '" + word + "' (write {{ for a literal brace)");
    }
    names.push_back(word.substr(i + 1, close - i - 1));
    i = close;
  }
  return names;
}

Result<StudyConfig> LoadConfigText(const std::string& text, const std::string& source,
                                   const std::vector<std::string>& overrides) {
  if (text.size() > kMaxConfigBytes) {
    return Status::InvalidInput(source + ": " + std::to_string(text.size()) + " bytes; a config may hold at most " +
                                std::to_string(kMaxConfigBytes) + " (is this the right file?)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {  // syntax errors, and nesting past yaml-cpp's own depth guard
    const std::string where =
        e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    return Status::InvalidInput(source + where + ": YAML syntax error: " + e.msg);
  }
  if (!root.IsMap()) {
    return Status::InvalidInput(source + ": expected a mapping with study:, sampler:, trial: and space:");
  }
  std::set<std::string> overridden;
  for (const std::string& o : overrides) CS_RETURN_IF_ERROR(ApplyOverride(o, root, &overridden));

  const YamlReader r(source, overridden);
  CS_RETURN_IF_ERROR(r.CheckTree(root));
  CS_RETURN_IF_ERROR(r.CheckKeys(root, "", {"study", "sampler", "pruner", "trial", "space", "workers", "enqueue"}));
  StudyConfig config;
  config.source = source;
  CS_RETURN_IF_ERROR(ParseStudy(r, root["study"], &config.study));
  CS_RETURN_IF_ERROR(ParseSampler(r, root["sampler"], config.study.multi_objective(), &config.sampler));
  if (config.study.multi_objective() && config.sampler.kind != "auto" && !AcceptsSeveralMetrics(config.sampler.kind)) {
    return r.Error(root["sampler"]["kind"], "sampler.kind",
                   "the " + config.sampler.kind + " sampler optimises one metric and this study has " +
                       std::to_string(config.study.metrics.size()) +
                       " (study.metrics); samplers for several metrics: nsga2, tpe, random, grid, sobol");
  }
  CS_RETURN_IF_ERROR(ParsePruner(r, root["pruner"], &config.pruner));
  if (config.sampler.kind == "pbt" && config.pruner.kind != "none") {
    return r.Error(root["pruner"], "pruner", "pbt stops and replaces its members itself; leave out pruner:");
  }
  if (config.sampler.kind == "pbt" && config.study.n_trials < config.sampler.population) {
    return r.Error(root["study"]["n_trials"], "study.n_trials",
                   "counts the pbt population's " + std::to_string(config.sampler.population) +
                       " members and every member that replaces one: it must be at least sampler.population");
  }
  Result<SearchSpace> space = ParseSpace(r, root["space"]);
  if (!space.ok()) return space.status();
  config.space = std::move(*space);
  if (config.sampler.kind == "auto") {
    SamplerChoice choice = ChooseSampler(config);
    config.sampler.kind = std::move(choice.kind);
    config.sampler.reason = std::move(choice.reason);
  }
  CS_RETURN_IF_ERROR(ParseTrial(r, root["trial"], config.space, &config.trial));
  if (config.sampler.kind == "pbt" && config.trial.checkpoint_keep == CheckpointKeep::kNone) {
    return r.Error(root["trial"]["checkpoint_keep"], "trial.checkpoint_keep",
                   "none would remove the checkpoints of finished members, which pbt starts new members from; use "
                   "last or all");
  }
  CS_RETURN_IF_ERROR(ParseWorkers(r, root["workers"], &config.workers));
  if (config.trial.gangs() && config.workers.queue.value_or(0) > 0) {
    return r.Error(root["workers"]["queue"], "workers.queue",
                   "must be 0 or auto when trials take several GPUs (trial.gpus): a trial of a gang starts on all "
                   "its workers at once, so none can wait on a busy worker");
  }
  CS_RETURN_IF_ERROR(ParseEnqueue(r, root["enqueue"], config, &config.enqueue));
  config.yaml_text = overrides.empty() ? text : YAML::Dump(root) + "\n";
  return config;
}

Result<StudyConfig> LoadConfigFile(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput(path + ": cannot open the config file (" + std::strerror(errno) + ")");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return LoadConfigText(buffer.str(), path, overrides);
}

}  // namespace cleansweep
