// Sharding: cutting one sweep into N independent runs (a Slurm job array, say) whose union is the
// sweep. The unsharded sweep hands out its trials as a list (enqueued configurations first, then
// the sampler's proposals); shard K of N runs the positions K, K+N, K+2N, ... of that list.
// Samplers that propose by position (random, grid, sobol) therefore give each shard exactly its
// part of the unsharded sweep; model-based samplers (tpe, cmaes) learn from their own shard only,
// so each shard is an independent search with a seed derived from the study's (docs/slurm.md).
#pragma once

#include <cstdint>
#include <string>

#include "util/status.hpp"

namespace cleansweep {

struct Shard {
  std::int64_t index = 0;  // K, from 0
  std::int64_t count = 1;  // N; 1 means not sharded

  bool sharded() const { return count > 1; }
  std::string Name() const { return std::to_string(index) + "/" + std::to_string(count); }
  friend bool operator==(const Shard& a, const Shard& b) { return a.index == b.index && a.count == b.count; }
};

// "K/N" with 0 <= K < N (K from 0, as SLURM_ARRAY_TASK_ID with --array=0-(N-1)). InvalidInput
// saying what is allowed otherwise.
Result<Shard> ParseShard(const std::string& text);

// Position in the unsharded trial list of the shard's j-th trial (j from 0).
inline std::int64_t ShardPosition(const Shard& shard, std::int64_t j) { return shard.index + j * shard.count; }

// How many of the positions [0, total) belong to the shard.
std::int64_t ShardSize(const Shard& shard, std::int64_t total);

// Whether position `position` belongs to the shard.
inline bool InShard(const Shard& shard, std::int64_t position) { return position % shard.count == shard.index; }

// Whether the sampler `kind` proposes by position, so that shards partition the unsharded sweep.
bool ShardsPartitionSweep(const std::string& sampler_kind);

// The sampler seed shard K uses: the study's seed for samplers that partition the sweep (every
// shard must see the same sequence), a distinct seed per shard for model-based ones.
std::uint64_t ShardSeed(const std::string& sampler_kind, std::uint64_t seed, const Shard& shard);

// The study file of a shard: "results/s.h5" -> "results/s-shard-2-of-8.h5". Unchanged when not
// sharded or when `storage` already names this shard, so applying it twice is harmless.
std::string ShardStoragePath(const std::string& storage, const Shard& shard);

}  // namespace cleansweep
