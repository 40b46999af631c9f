#include "config/shard.hpp"

#include <charconv>
#include <filesystem>

#include "util/random.hpp"

namespace cleansweep {
namespace {

constexpr std::int64_t kMaxShards = 1'000'000;

bool ParseCount(const std::string& text, std::int64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

}  // namespace

Result<Shard> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  Shard shard;
  if (slash == std::string::npos || !ParseCount(text.substr(0, slash), &shard.index) ||
      !ParseCount(text.substr(slash + 1), &shard.count)) {
    return Status::InvalidInput("shard '" + text + "': expected K/N, e.g. 0/4 for the first of 4 shards");
  }
  if (shard.count < 1 || shard.count > kMaxShards) {
    return Status::InvalidInput("shard '" + text + "': N must be between 1 and " + std::to_string(kMaxShards));
  }
  if (shard.index < 0 || shard.index >= shard.count) {
    return Status::InvalidInput("shard '" + text + "': K counts from 0 and must be below N (0.." +
                                std::to_string(shard.count - 1) + ")");
  }
  return shard;
}

std::int64_t ShardSize(const Shard& shard, std::int64_t total) {
  return total > shard.index ? (total - shard.index + shard.count - 1) / shard.count : 0;
}

bool ShardsPartitionSweep(const std::string& sampler_kind) {
  return sampler_kind == "random" || sampler_kind == "grid" || sampler_kind == "sobol";
}

std::uint64_t ShardSeed(const std::string& sampler_kind, std::uint64_t seed, const Shard& shard) {
  if (!shard.sharded() || ShardsPartitionSweep(sampler_kind)) return seed;
  // Mixing (not adding) the index: shards of neighbouring seeds must not share seeds.
  return StreamFor(seed, static_cast<std::uint64_t>(shard.index) + 1).Next();
}

std::string ShardStoragePath(const std::string& storage, const Shard& shard) {
  if (!shard.sharded()) return storage;
  const std::string tag = "-shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  const std::filesystem::path path(storage);
  const std::string stem = path.stem().string();
  if (stem.size() >= tag.size() && stem.compare(stem.size() - tag.size(), tag.size(), tag) == 0) return storage;
  return (path.parent_path() / (stem + tag + path.extension().string())).string();
}

}  // namespace cleansweep
