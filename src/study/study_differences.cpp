#include "study/study_differences.hpp"

#include <map>
#include <sstream>

#include "study/table_layout.hpp"

namespace cleansweep {
namespace {

// name -> its line of SearchSpace::Describe() ("  lr: float [1e-05, 0.1] log").
std::map<std::string, std::string> DescribedParams(const SearchSpace& space) {
  std::map<std::string, std::string> lines;
  std::istringstream text(space.Describe());
  for (std::string line; std::getline(text, line);) {
    const size_t colon = line.find(": ");
    if (line.rfind("  ", 0) == 0 && colon != std::string::npos)
      lines[line.substr(2, colon - 2)] = line.substr(colon + 2);
  }
  return lines;
}

}  // namespace

std::vector<std::string> StudyDifferences(const StudyConfig& stored, const StudyConfig& now, bool* breaking) {
  std::vector<std::string> out;
  *breaking = false;
  if (stored.study.metric != now.study.metric) {
    out.push_back("study.metric: was " + stored.study.metric + ", now " + now.study.metric);
  }
  if (stored.study.direction != now.study.direction) {
    out.push_back(std::string("study.direction: was ") + DirectionName(stored.study.direction) + ", now " +
                  DirectionName(now.study.direction));
  }
  // The metrics name columns (value_<metric>): another list is another file layout.
  const auto names = [](const StudyOptions& o) {
    std::string list;
    for (const Metric& m : o.metrics) list += (list.empty() ? "" : ", ") + m.name;
    return list;
  };
  const bool several = stored.study.multi_objective() || now.study.multi_objective();
  if (several && names(stored.study) != names(now.study)) {
    out.push_back("study.metrics: was [" + names(stored.study) + "], now [" + names(now.study) + "]");
    *breaking = true;
  } else if (several) {
    for (size_t i = 1; i < now.study.metrics.size(); ++i) {  // the first's direction is `direction` above
      if (stored.study.metrics[i].direction != now.study.metrics[i].direction) {
        out.push_back("study.metrics." + now.study.metrics[i].name + ": was " +
                      DirectionName(stored.study.metrics[i].direction) + ", now " +
                      DirectionName(now.study.metrics[i].direction));
      }
    }
  }
  if (!(stored.study.shard == now.study.shard)) {
    // Another shard runs other positions of the trial list: its trials do not continue these.
    out.push_back("study.shard: was " + stored.study.shard.Name() + ", now " + now.study.shard.Name());
    *breaking = true;
  }
  const auto before = DescribedParams(stored.space), after = DescribedParams(now.space);
  for (const auto& [name, line] : before) {
    const auto it = after.find(name);
    if (it == after.end()) {
      out.push_back("param " + name + ": removed (was " + line + ")");
      *breaking = true;
    } else if (it->second != line) {
      out.push_back("param " + name + ": was " + line + ", now " + it->second);
      const ParamSpec& was = *stored.space.Find(name);
      const ParamSpec& is = *now.space.Find(name);
      // A new column type, or text wider than the file's fixed-width column, cannot be stored.
      if (ParamColumnType(was) != ParamColumnType(is) ||
          (ParamColumnType(is) == ColumnType::kString && ParamColumnLength(is) > ParamColumnLength(was))) {
        *breaking = true;
      }
    }
  }
  for (const auto& [name, line] : after) {
    if (!before.count(name)) {
      out.push_back("param " + name + ": added (" + line + ")");
      *breaking = true;
    }
  }
  return out;
}

std::vector<std::string> SweepDifferences(const StudyConfig& a, const std::string& a_path, const StudyConfig& b,
                                          bool shard_count) {
  const auto identity = [&](const StudyConfig& c) -> std::vector<std::pair<std::string, std::string>> {
    return {{"study.name", c.study.name},
            {"study.n_trials", std::to_string(c.study.n_trials)},
            {"shard count", shard_count ? std::to_string(c.study.shard.count) : ""},
            {"sampler.kind", c.sampler.kind},
            {"sampler.seed", std::to_string(c.sampler.seed)},
            {"enqueue", std::to_string(c.enqueue.size()) + " configurations"}};
  };
  std::vector<std::string> problems;
  const auto want = identity(a), have = identity(b);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != have[i]) {
      problems.push_back(have[i].first + " is " + have[i].second + ", but " + a_path + " has " + want[i].second);
    }
  }
  bool breaking = false;
  StudyConfig other = b;
  other.study.shard = a.study.shard;  // shard indexes differ by design
  for (const std::string& line : StudyDifferences(a, other, &breaking)) {
    problems.push_back("differs from " + a_path + ": " + line);
  }
  return problems;
}

}  // namespace cleansweep
