// Merging the study files of a sharded sweep (`cleansweep merge`) into one study, as if the
// sweep had run in one job: trials renumbered in the order they started, retries and
// intermediate values following their trials. Pure: reading and writing files is the caller's.
#pragma once

#include <string>
#include <vector>

#include "study/study_file.hpp"

namespace cleansweep {

struct MergedStudy {
  StudyConfig config;  // the shards' config, unsharded, stored at the output path
  std::vector<TrialRecord> trials;
  std::vector<IntermediateValue> intermediate;
  std::string merged_from;  // one line per shard: "K/N PATH (T trials)"
};

// InvalidInput, listing every problem with the shard file it concerns, when the files are not
// the distinct shards of one sweep (other objective, space, sampler, seed, n_trials or shard
// count), when a shard has trials still RUNNING, or when shards are missing and not
// `allow_missing`.
Result<MergedStudy> MergeShards(const std::vector<StudyData>& shards, const std::string& out_path, bool allow_missing);

}  // namespace cleansweep
