#include "samplers/sobol_sampler.hpp"

#include <set>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

SearchSpace Space(int floats) {
  std::string text = "study: {name: s}\ntrial: {command: [x]}\nspace:\n";
  for (int i = 0; i < floats; ++i) text += "  p" + std::to_string(i) + ": {type: float, low: 0.0, high: 1.0}\n";
  Result<StudyConfig> config = LoadConfigText(text, "s.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config->space;
}

TEST(SobolSampler, EveryCoordinateIsStratified) {
  // The first 2^k points put exactly one point in each interval of width 2^-k, in every dimension,
  // scrambled or not.
  for (bool scramble : {false, true}) {
    std::unique_ptr<SobolSampler> sobol = SobolSampler::Create(Space(21), 7, scramble).value();
    for (int d = 0; d < 21; ++d) {
      std::set<int> bins;
      for (int i = 0; i < 128; ++i)
        bins.insert(static_cast<int>(sobol->Point(static_cast<std::uint64_t>(i))[static_cast<size_t>(d)] * 128));
      EXPECT_EQ(bins.size(), 128u) << "dimension " << d << (scramble ? " scrambled" : "");
    }
  }
}

TEST(SobolSampler, FirstTwoDimensionsFormANet) {
  std::unique_ptr<SobolSampler> sobol = SobolSampler::Create(Space(2), 3, true).value();
  std::set<int> cells;  // 64 points, an 8 x 8 grid: one per cell
  for (int i = 0; i < 64; ++i) {
    const auto p = sobol->Point(static_cast<std::uint64_t>(i));
    cells.insert(static_cast<int>(p[0] * 8) * 8 + static_cast<int>(p[1] * 8));
  }
  EXPECT_EQ(cells.size(), 64u);
}

TEST(SobolSampler, UnscrambledMatchesTheTextbookSequence) {
  std::unique_ptr<SobolSampler> sobol = SobolSampler::Create(Space(3), 0, false).value();
  const double half = 0.5 + 0.5 * 0x1.0p-32, quarter = 0.25 + 0.5 * 0x1.0p-32, three = 0.75 + 0.5 * 0x1.0p-32;
  EXPECT_EQ(sobol->Point(1), (std::vector<double>{half, half, half}));
  EXPECT_EQ(sobol->Point(2), (std::vector<double>{quarter, three, three}));
  EXPECT_EQ(sobol->Point(3), (std::vector<double>{three, quarter, quarter}));
}

TEST(SobolSampler, SeedChangesTheScrambleAndOnlyTheScramble) {
  std::unique_ptr<SobolSampler> a = SobolSampler::Create(Space(4), 1, true).value();
  std::unique_ptr<SobolSampler> b = SobolSampler::Create(Space(4), 2, true).value();
  std::unique_ptr<SobolSampler> a2 = SobolSampler::Create(Space(4), 1, true).value();
  EXPECT_NE(a->Point(5), b->Point(5));
  EXPECT_EQ(a->Point(5), a2->Point(5));
}

TEST(SobolSampler, MapsOntoEveryParameterKind) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: s}\nsampler: {kind: sobol, seed: 4}\ntrial: {command: [x]}\nspace:\n"
      "  lr: {type: float, low: 1.0e-4, high: 1.0, log: true}\n  n: {type: int, low: 1, high: 8}\n"
      "  opt: {type: categorical, choices: [sgd, adam]}\n  m: {type: float, low: 0.0, high: 1.0, when: {opt: sgd}}\n"
      "  e: 3\n",
      "s.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  std::unique_ptr<Sampler> sampler = MakeSampler(*config).value();
  std::set<std::int64_t> ns;
  TrialHistory history;
  for (int i = 0; i < 64; ++i) {
    const ParamSet p = *sampler->Ask(i, history);
    ns.insert(std::get<std::int64_t>(p.at("n")));
    EXPECT_EQ(p.count("m") == 1, std::get<std::string>(p.at("opt")) == "sgd");
    EXPECT_EQ(p.at("e"), ParamValue(std::int64_t{3}));
  }
  EXPECT_EQ(ns.size(), 8u);
}

TEST(SobolSampler, TooManyDimensionsIsAConfigError) {
  Result<std::unique_ptr<SobolSampler>> sobol = SobolSampler::Create(Space(22), 1, true);
  ASSERT_FALSE(sobol.ok());
  EXPECT_NE(sobol.status().message().find("up to 21 parameters, this space has 22"), std::string::npos);
}

}  // namespace
}  // namespace cleansweep
