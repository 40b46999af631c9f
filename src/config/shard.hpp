// Sharding: one sweep run as several jobs (a Slurm job array, jobs that join later), each with a
// study file of its own. The unsharded sweep hands out its trials as a list (enqueued
// configurations first, then the sampler's proposals); shard K of N runs the positions K, K+N,
// K+2N, ... of that list. Samplers that propose by position (random, grid, sobol) therefore give
// each shard exactly its part of the unsharded sweep. Model-based samplers (tpe, gp, cmaes, nsga2)
// get a seed of their own per shard and, with study.share_every, learn from their siblings' files
// and share one n_trials (study/siblings.hpp). A joined shard (`run --join`) has no place in the
// list: it takes the next free index and draws from the sampler (docs/slurm.md).
#pragma once

#include <cstdint>
#include <string>

#include "util/status.hpp"

namespace cleansweep {

struct Shard {
  std::int64_t index = 0;  // K, from 0
  std::int64_t count = 1;  // N; 1 means not sharded (also for a joined shard)
  bool joined = false;     // started by `run --join`: index K, no place in the trial list

  // Whether the sweep's trial list is cut (K/N with N > 1); a joined shard's is not.
  bool sharded() const { return count > 1; }
  // Whether this run is one of several study files of one sweep.
  bool part() const { return sharded() || joined; }
  // "K/N", or "joined-K"; what study.shard holds and ParseShard reads.
  std::string Name() const {
    return joined ? "joined-" + std::to_string(index) : std::to_string(index) + "/" + std::to_string(count);
  }
  friend bool operator==(const Shard& a, const Shard& b) {
    return a.index == b.index && a.count == b.count && a.joined == b.joined;
  }
};

// "K/N" with 0 <= K < N (K from 0, as SLURM_ARRAY_TASK_ID with --array=0-(N-1)), or "joined-K"
// (K >= 0, what `run --join` stores). InvalidInput saying what is allowed otherwise.
Result<Shard> ParseShard(const std::string& text);

// Where a joined shard's proposals count from: past any list (enqueued configurations, grid points).
inline constexpr std::int64_t kJoinedPositions = std::int64_t{1} << 40;

// Position in the unsharded trial list of the shard's j-th trial (j from 0); a joined shard's lie
// past the list, so it never takes an enqueued configuration (those are the array's).
inline std::int64_t ShardPosition(const Shard& shard, std::int64_t j) {
  return shard.joined ? kJoinedPositions + j : shard.index + j * shard.count;
}

// How many of the positions [0, total) belong to the shard.
std::int64_t ShardSize(const Shard& shard, std::int64_t total);

// Whether position `position` belongs to the shard.
inline bool InShard(const Shard& shard, std::int64_t position) {
  return shard.joined ? position >= kJoinedPositions : position % shard.count == shard.index;
}

// Whether the sampler `kind` proposes by position, so that shards partition the unsharded sweep.
bool ShardsPartitionSweep(const std::string& sampler_kind);

// The sampler seed shard K uses: the study's seed for samplers that partition the sweep (every
// shard must see the same sequence), a distinct seed per shard for model-based ones.
std::uint64_t ShardSeed(const std::string& sampler_kind, std::uint64_t seed, const Shard& shard);

// The study file of a shard: "results/s.h5" -> "results/s-shard-2-of-8.h5", or for a joined
// shard "results/s-shard-9.h5". Unchanged when not a part of a sweep or when `storage` already
// names this shard, so applying it twice is harmless.
std::string ShardStoragePath(const std::string& storage, const Shard& shard);

// The sweep a study file belongs to: its path without a "-shard-K-of-N" or "-shard-K" tag
// ("results/s-shard-2-of-8.h5" -> "results/s.h5"). Every file of one sweep lies beside it.
std::string SweepStoragePath(const std::string& storage);

// For a file name in the sweep's folder: whether it is one of `sweep`'s files (the sweep's own
// name, a shard's or a joined shard's), and if a shard's, its index K in `*index` (else -1).
bool IsSweepFileName(const std::string& sweep_file_name, const std::string& name, std::int64_t* index);

}  // namespace cleansweep
