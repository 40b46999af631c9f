#include "study/merge.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "study/study_differences.hpp"

namespace cleansweep {
Result<MergedStudy> MergeShards(const std::vector<StudyData>& shards, const std::string& out_path, bool allow_missing) {
  if (shards.empty()) return Status::InvalidInput("merge: no shard files given");
  std::vector<std::string> problems;
  const StudyData& first = shards.front();
  std::map<std::int64_t, const StudyData*> by_index;
  // A study that jobs joined (run --join) is merged with them: it is part 0 of its sweep.
  const bool any_joined =
      std::any_of(shards.begin(), shards.end(), [](const StudyData& d) { return d.config.study.shard.joined; });
  for (const StudyData& shard : shards) {
    const Shard& s = shard.config.study.shard;
    if (!s.part() && !any_joined) {
      problems.push_back(shard.path + ": not a shard (it was not run with --shard K/N or --join)");
      continue;
    }
    if (const auto [it, fresh] = by_index.emplace(s.index, &shard); !fresh) {
      problems.push_back(shard.path + ": shard " + s.Name() + " again (also " + it->second->path + ")");
    }
    if (&shard != &first) {
      // An array's shards agree on their count; joined shards (run --join) join any array.
      const bool both_array = !s.joined && !first.config.study.shard.joined;
      for (const std::string& line : SweepDifferences(first.config, first.path, shard.config, both_array)) {
        problems.push_back(shard.path + ": " + line);
      }
    }
    const auto running = std::count_if(shard.trials.begin(), shard.trials.end(),
                                       [](const TrialRecord& r) { return r.state == TrialState::kRunning; });
    if (running > 0) {
      problems.push_back(shard.path + ": " + std::to_string(running) +
                         " trials are still RUNNING (the shard is running, or was killed: continue it with "
                         "cleansweep resume " +
                         shard.path + ")");
    }
  }
  std::int64_t array_count = 0;  // the job array's N; joined shards come on top of it
  for (const StudyData& shard : shards) {
    if (!shard.config.study.shard.joined) array_count = std::max(array_count, shard.config.study.shard.count);
  }
  if (problems.empty() && !allow_missing) {
    std::string missing;
    for (std::int64_t k = 0; k < array_count; ++k) {
      if (!by_index.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    }
    if (!missing.empty()) {
      problems.push_back("shards " + missing + " of " + std::to_string(array_count) +
                         " are missing; give their files too, or --allow-missing to merge these alone");
    }
  }
  if (!problems.empty()) {
    std::string text = "cannot merge these study files:";
    for (const std::string& p : problems) text += "\n  " + p;
    return Status::InvalidInput(text);
  }

  MergedStudy merged;
  Result<StudyConfig> config = LoadConfigText(first.config.yaml_text, first.path + " (stored config)",
                                              {"study.shard=0/1", "study.storage=" + out_path});
  if (!config.ok()) return config.status();
  merged.config = std::move(*config);

  // Every trial, in the order trials started across the shards; ties by shard, then number.
  struct Source {
    std::int64_t shard;
    const TrialRecord* record;
  };
  std::vector<Source> order;
  for (const auto& [index, shard] : by_index) {
    for (const TrialRecord& r : shard->trials) order.push_back({index, &r});
    merged.merged_from += shard->config.study.shard.Name() + " " + shard->path + " (" +
                          std::to_string(shard->trials.size()) + " trials)\n";
  }
  std::stable_sort(order.begin(), order.end(), [](const Source& a, const Source& b) {
    return std::tie(a.record->start_time, a.shard, a.record->number) <
           std::tie(b.record->start_time, b.shard, b.record->number);
  });
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> renumbered;  // (shard, old) -> new
  for (const Source& s : order) {
    renumbered[{s.shard, s.record->number}] = static_cast<std::int64_t>(renumbered.size());
  }
  for (const Source& s : order) {
    TrialRecord r = *s.record;
    r.number = renumbered.at({s.shard, r.number});
    if (r.retry_of >= 0) {
      const auto it = renumbered.find({s.shard, r.retry_of});
      r.retry_of = it == renumbered.end() ? -1 : it->second;
    }
    merged.trials.push_back(std::move(r));
  }
  for (const auto& [index, shard] : by_index) {
    for (IntermediateValue v : shard->intermediate) {
      const auto it = renumbered.find({index, v.trial});
      if (it == renumbered.end()) continue;  // a value of a trial row that was never written
      v.trial = it->second;
      merged.intermediate.push_back(v);
    }
  }
  std::stable_sort(merged.intermediate.begin(), merged.intermediate.end(),
                   [](const IntermediateValue& a, const IntermediateValue& b) {
                     return std::tie(a.trial, a.step) < std::tie(b.trial, b.step);
                   });
  return merged;
}

}  // namespace cleansweep
