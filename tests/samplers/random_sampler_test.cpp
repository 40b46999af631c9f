#include "samplers/random_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "support/sampler_fixtures.hpp"

namespace cleansweep {
namespace {

StudyConfig Config(const std::string& space, const std::string& sampler = "{kind: random, seed: 5}") {
  return testing::SamplerConfig(space, sampler);
}

const char* kSpace = testing::kEveryKindSpace;

std::vector<ParamSet> Draw(const StudyConfig& config, int n) {
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
  std::vector<ParamSet> out;
  TrialHistory history;
  for (int i = 0; i < n; ++i) out.push_back(*(*sampler)->Ask(i, history));
  return out;
}

TEST(RandomSampler, StaysInBoundsOnStepsAndTypes) {
  for (const ParamSet& p : Draw(Config(kSpace), 2000)) {
    const double lr = std::get<double>(p.at("lr"));
    EXPECT_GE(lr, 1e-5);
    EXPECT_LE(lr, 1.0);
    const double q = std::get<double>(p.at("q"));
    EXPECT_NEAR(q * 10, std::round(q * 10), 1e-9);
    const auto c = std::get<std::int64_t>(p.at("c"));
    EXPECT_EQ(c % 8, 0);
    EXPECT_GE(c, 8);
    EXPECT_LE(c, 64);
    const auto b = std::get<std::int64_t>(p.at("b"));
    EXPECT_GE(b, 1);
    EXPECT_LE(b, 1024);
    EXPECT_EQ(std::get<std::int64_t>(p.at("fixed")), 42);
  }
}

TEST(RandomSampler, LogScaleIsUniformInTheExponent) {
  int below = 0;  // lr below the geometric middle 10^-2.5
  const auto draws = Draw(Config(kSpace), 4000);
  for (const ParamSet& p : draws) below += std::get<double>(p.at("lr")) < std::pow(10.0, -2.5) ? 1 : 0;
  EXPECT_NEAR(below / 4000.0, 0.5, 0.04);
}

TEST(RandomSampler, CoversEveryChoiceAndIntValueEvenly) {
  std::map<std::string, int> opts;
  std::map<std::int64_t, int> ns;
  for (const ParamSet& p : Draw(Config(kSpace), 6000)) {
    ++opts[std::get<std::string>(p.at("opt"))];
    ++ns[std::get<std::int64_t>(p.at("n"))];
  }
  ASSERT_EQ(opts.size(), 3u);
  for (const auto& [name, count] : opts) EXPECT_NEAR(count, 2000, 200) << name;
  ASSERT_EQ(ns.size(), 6u);  // both ends of [1, 6] as likely as the middle
  for (const auto& [value, count] : ns) EXPECT_NEAR(count, 1000, 150) << value;
}

TEST(RandomSampler, ConditionalParametersOnlyWhenActive) {
  for (const ParamSet& p : Draw(Config(kSpace), 500)) {
    EXPECT_EQ(p.count("m") == 1, std::get<std::string>(p.at("opt")) == "sgd");
  }
}

TEST(RandomSampler, SameSeedSameTrialsWhateverTheOrder) {
  const StudyConfig config = Config(kSpace);
  const auto a = Draw(config, 50);
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
  TrialHistory history;
  for (int i = 49; i >= 0; --i) EXPECT_EQ(*(*sampler)->Ask(i, history), a[static_cast<size_t>(i)]);
  const auto other = Draw(Config(kSpace, "{kind: random, seed: 6}"), 50);
  EXPECT_NE(a, other);
  EXPECT_NE(a[0], a[1]);
}

// An enqueued configuration that fixes a choice gets the parameters that choice makes active,
// whatever the sampler's proposal and the random draw chose (both may lack them).
TEST(CompleteEnqueued, ParametersAChoiceMakesActiveAreAlwaysFilledIn) {
  const StudyConfig config = Config(kSpace);
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
  ASSERT_TRUE(sampler.ok());
  int without_m = 0;  // proposals that chose another optimizer, so lack the momentum m
  for (std::int64_t n = 0; n < 60; ++n) {
    without_m += (*sampler)->Ask(n, TrialHistory{})->count("m") == 0;
    const ParamSet p = CompleteEnqueued(**sampler, config, {{"opt", std::string("sgd")}}, n, TrialHistory{});
    EXPECT_EQ(p.at("opt"), ParamValue(std::string("sgd")));
    ASSERT_EQ(p.count("m"), 1u) << "trial " << n << ": m is active (opt = sgd) but missing";
    EXPECT_TRUE(SearchSpace::Normalize(config.space.params()[7], p.at("m")).ok());
    const ParamSet adam = CompleteEnqueued(**sampler, config, {{"opt", std::string("adam")}}, n, TrialHistory{});
    EXPECT_EQ(adam.count("m"), 0u) << "m is inactive with adam";
  }
  EXPECT_GT(without_m, 20) << "the case this test is about did not come up";
  // DrawEvery is Draw with the inactive parameters kept: the active ones are the same values.
  for (std::uint64_t n = 0; n < 20; ++n) {
    SplitMix64 a = StreamFor(5, n), b = StreamFor(5, n);
    const ParamSet active = RandomSampler::Draw(config.space, a), every = RandomSampler::DrawEvery(config.space, b);
    EXPECT_EQ(every.size(), config.space.params().size());
    for (const auto& [name, value] : active) EXPECT_EQ(every.at(name), value) << name;
  }
}

}  // namespace
}  // namespace cleansweep
