#include "config/shard.hpp"

#include <gtest/gtest.h>

#include "config/study_config.hpp"

namespace cleansweep {
namespace {

TEST(Shard, ParsesKOfNCountingFromZero) {
  Result<Shard> shard = ParseShard("2/8");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 8);
  EXPECT_EQ(shard->Name(), "2/8");
  EXPECT_TRUE(ParseShard("0/1").ok());
  for (const char* bad : {"8/8", "-1/4", "1/0", "1", "1/", "/4", "a/4", "1/4x", "1 /4", ""}) {
    EXPECT_FALSE(ParseShard(bad).ok()) << bad;
  }
  EXPECT_NE(ParseShard("4/4").status().message().find("K counts from 0 and must be below N (0..3)"), std::string::npos);
}

// Every position of the trial list belongs to exactly one shard, and the sizes add up.
TEST(Shard, ShardsPartitionEveryPrefixOfTheTrialList) {
  for (std::int64_t n : {1, 2, 3, 7, 16}) {
    for (std::int64_t total : {0, 1, 5, 16, 17, 1000}) {
      std::int64_t sum = 0;
      std::vector<int> owners(static_cast<size_t>(total), 0);
      for (std::int64_t k = 0; k < n; ++k) {
        const Shard shard{k, n};
        const std::int64_t size = ShardSize(shard, total);
        sum += size;
        for (std::int64_t j = 0; j < size; ++j) {
          const std::int64_t position = ShardPosition(shard, j);
          ASSERT_LT(position, total);
          EXPECT_TRUE(InShard(shard, position));
          ++owners[static_cast<size_t>(position)];
        }
      }
      EXPECT_EQ(sum, total) << n << " shards of " << total;
      for (int owner_count : owners) EXPECT_EQ(owner_count, 1);
    }
  }
  EXPECT_EQ(ShardSize({5, 8}, 3), 0);  // more shards than trials: the last ones have nothing
}

TEST(Shard, OnlyModelBasedSamplersGetADerivedSeed) {
  for (const char* kind : {"random", "grid", "sobol"}) {
    EXPECT_EQ(ShardSeed(kind, 42, {3, 4}), 42u) << kind;
  }
  EXPECT_EQ(ShardSeed("tpe", 42, {0, 1}), 42u);
  std::set<std::uint64_t> seeds;
  for (std::int64_t k = 0; k < 64; ++k) seeds.insert(ShardSeed("tpe", 42, {k, 64}));
  EXPECT_EQ(seeds.size(), 64u);
  EXPECT_EQ(seeds.count(42), 0u);
  EXPECT_EQ(ShardSeed("cmaes", 42, {1, 2}), ShardSeed("cmaes", 42, {1, 2}));
}

TEST(Shard, EachShardGetsItsOwnStudyFileAndTheNameSticks) {
  EXPECT_EQ(ShardStoragePath("results/s.h5", {2, 8}), "results/s-shard-2-of-8.h5");
  EXPECT_EQ(ShardStoragePath("results/s-shard-2-of-8.h5", {2, 8}), "results/s-shard-2-of-8.h5");
  EXPECT_EQ(ShardStoragePath("s.h5", {0, 2}), "s-shard-0-of-2.h5");
  EXPECT_EQ(ShardStoragePath("/a/b/s", {1, 2}), "/a/b/s-shard-1-of-2");
  EXPECT_EQ(ShardStoragePath("results/s.h5", {0, 1}), "results/s.h5");
}

TEST(Shard, TheConfigKeyShardsTheStudyAndItsFile) {
  const std::string yaml = "study: {name: s}\ntrial: {command: [sh]}\nspace:\n  x: {type: float, low: 0, high: 1}\n";
  Result<StudyConfig> config = LoadConfigText(yaml, "s.yaml", {"study.shard=1/3"});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->study.shard, (Shard{1, 3}));
  EXPECT_EQ(config->study.storage, "results/s-shard-1-of-3.h5");
  // Reloading the stored text with its own file as storage (what resume does) keeps the name.
  Result<StudyConfig> again = LoadConfigText(config->yaml_text, "stored", {"study.storage=" + config->study.storage});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->study.storage, "results/s-shard-1-of-3.h5");
  EXPECT_EQ(again->study.shard, (Shard{1, 3}));
  Result<StudyConfig> bad = LoadConfigText(yaml, "s.yaml", {"study.shard=3/3"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("study.shard: shard '3/3': K counts from 0"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

// run --join stores "joined-K": a shard with an index of its own and no part of the trial list.
TEST(Shard, AJoinedShardHasItsOwnIndexFileAndSeedButNoPartOfTheList) {
  Result<Shard> joined = ParseShard("joined-9");
  ASSERT_TRUE(joined.ok()) << joined.status().message();
  EXPECT_TRUE(joined->joined);
  EXPECT_EQ(joined->index, 9);
  EXPECT_FALSE(joined->sharded());
  EXPECT_TRUE(joined->part());
  EXPECT_EQ(joined->Name(), "joined-9");
  EXPECT_EQ(ShardStoragePath("results/s.h5", *joined), "results/s-shard-9.h5");
  EXPECT_EQ(ShardStoragePath("results/s-shard-9.h5", *joined), "results/s-shard-9.h5");
  EXPECT_EQ(ShardSize(*joined, 100), 100);
  // Even random sampling needs its own seed there, or it would repeat the sweep's first trials.
  EXPECT_NE(ShardSeed("random", 7, *joined), 7u);
  EXPECT_FALSE(ParseShard("joined-").ok());
  EXPECT_FALSE(ParseShard("joined--1").ok());
}

TEST(Shard, EveryFileOfASweepIsKnownByItsName) {
  EXPECT_EQ(SweepStoragePath("results/s-shard-2-of-8.h5"), "results/s.h5");
  EXPECT_EQ(SweepStoragePath("results/s-shard-9.h5"), "results/s.h5");
  EXPECT_EQ(SweepStoragePath("results/s.h5"), "results/s.h5");
  EXPECT_EQ(SweepStoragePath("results/my-shard-x.h5"), "results/my-shard-x.h5");
  std::int64_t index = -2;
  EXPECT_TRUE(IsSweepFileName("s.h5", "s.h5", &index));
  EXPECT_EQ(index, -1);
  EXPECT_TRUE(IsSweepFileName("s.h5", "s-shard-3-of-4.h5", &index));
  EXPECT_EQ(index, 3);
  EXPECT_TRUE(IsSweepFileName("s.h5", "s-shard-12.h5", &index));
  EXPECT_EQ(index, 12);
  EXPECT_FALSE(IsSweepFileName("s.h5", "s-shard-4-of-4.h5", &index));  // K must be below N
  EXPECT_FALSE(IsSweepFileName("s.h5", "t-shard-1.h5", &index));
  EXPECT_FALSE(IsSweepFileName("s.h5", "s-shard-1.h5.lock", &index));
  EXPECT_FALSE(IsSweepFileName("s.h5", ".s-shard-1.h5.creating", &index));
}

}  // namespace
}  // namespace cleansweep
