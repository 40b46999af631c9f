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
  if (text.rfind("joined-", 0) == 0) {
    Shard shard;
    shard.joined = true;
    if (!ParseCount(text.substr(7), &shard.index) || shard.index < 0 || shard.index >= kMaxShards) {
      return Status::InvalidInput("shard '" + text + "': expected joined-K with K from 0 to " +
                                  std::to_string(kMaxShards - 1) + " (what run --join stores)");
    }
    return shard;
  }
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
  if (shard.joined) return total;  // it shares the sweep's n_trials (Coordinator::Share)
  return total > shard.index ? (total - shard.index + shard.count - 1) / shard.count : 0;
}

bool ShardsPartitionSweep(const std::string& sampler_kind) {
  return sampler_kind == "random" || sampler_kind == "grid" || sampler_kind == "sobol";
}

std::uint64_t ShardSeed(const std::string& sampler_kind, std::uint64_t seed, const Shard& shard) {
  // A joined shard has no part of the list: even random sampling needs a seed of its own there.
  if (shard.joined) return StreamFor(seed, static_cast<std::uint64_t>(shard.index) + 1).Next();
  if (!shard.sharded() || ShardsPartitionSweep(sampler_kind)) return seed;
  // Mixing (not adding) the index: shards of neighbouring seeds must not share seeds.
  return StreamFor(seed, static_cast<std::uint64_t>(shard.index) + 1).Next();
}

std::string ShardStoragePath(const std::string& storage, const Shard& shard) {
  if (!shard.part()) return storage;
  const std::string tag =
      "-shard-" + std::to_string(shard.index) + (shard.joined ? std::string() : "-of-" + std::to_string(shard.count));
  const std::filesystem::path path(storage);
  const std::string stem = path.stem().string();
  if (stem.size() >= tag.size() && stem.compare(stem.size() - tag.size(), tag.size(), tag) == 0) return storage;
  return (path.parent_path() / (stem + tag + path.extension().string())).string();
}

namespace {

// The index of a shard tag at the end of `stem` ("-shard-K-of-N" or "-shard-K"), and where the
// tag starts; -1 when `stem` ends in none.
std::int64_t ShardTag(const std::string& stem, size_t* start) {
  const size_t at = stem.rfind("-shard-");
  if (at == std::string::npos) return -1;
  const std::string rest = stem.substr(at + 7);
  const size_t of = rest.find("-of-");
  std::int64_t index = 0, count = 0;
  if (!ParseCount(rest.substr(0, of), &index)) return -1;
  if (of != std::string::npos && (!ParseCount(rest.substr(of + 4), &count) || count < 1 || index >= count)) return -1;
  *start = at;
  return index;
}

}  // namespace

std::string SweepStoragePath(const std::string& storage) {
  const std::filesystem::path path(storage);
  const std::string stem = path.stem().string();
  size_t start = 0;
  if (ShardTag(stem, &start) < 0) return storage;
  return (path.parent_path() / (stem.substr(0, start) + path.extension().string())).string();
}

bool IsSweepFileName(const std::string& sweep_file_name, const std::string& name, std::int64_t* index) {
  *index = -1;
  if (name == sweep_file_name) return true;
  const std::filesystem::path sweep(sweep_file_name), file(name);
  if (file.extension() != sweep.extension()) return false;
  const std::string stem = file.stem().string();
  size_t start = 0;
  const std::int64_t k = ShardTag(stem, &start);
  if (k < 0 || stem.substr(0, start) != sweep.stem().string()) return false;
  *index = k;
  return true;
}

}  // namespace cleansweep
