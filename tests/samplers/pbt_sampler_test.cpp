// Population-based training's parameters (issue 17): the population drawn at random, and the
// explore step that derives a new member's parameters from a top member's.
#include "samplers/pbt_sampler.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/sampler_fixtures.hpp"

namespace cleansweep {
namespace {

StudyConfig Pbt(double resample) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: t, direction: maximize, n_trials: 50}\nsampler: {kind: pbt, seed: 3, population: 8, interval: 2, "
      "perturb: [0.5, 2.0], resample_probability: " +
          std::to_string(resample) + "}\ntrial: {command: [p]}\nspace:\n" + testing::kEveryKindSpace,
      "t.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

// Every parameter of `p` is a value of its parameter, present exactly when active.
void ExpectValid(const SearchSpace& space, const ParamSet& p) {
  for (const ParamSpec& spec : space.params()) {
    const bool active = SearchSpace::IsActive(spec, p);
    ASSERT_EQ(p.count(spec.name), active ? 1u : 0u) << spec.name;
    if (active) {
      EXPECT_TRUE(SearchSpace::Normalize(spec, p.at(spec.name)).ok()) << spec.name;
    }
  }
}

TEST(PbtSampler, TheFirstMembersAreRandomAndReproducible) {
  const StudyConfig config = Pbt(0.25);
  std::unique_ptr<Sampler> a = MakeSampler(config).value();
  std::unique_ptr<Sampler> b = MakeSampler(config).value();
  EXPECT_EQ(a->FreshLimit(), 8);
  for (std::int64_t n = 0; n < 8; ++n) {
    const ParamSet p = *a->Ask(n, TrialHistory{});
    ExpectValid(config.space, p);
    EXPECT_EQ(p, *b->Ask(n, TrialHistory{}));
  }
  EXPECT_FALSE(MakeSampler(testing::SamplerConfig(testing::kEveryKindSpace, "{kind: random}"))
                   .value()
                   ->Derive(1, ParamSet{})
                   .has_value())
      << "only pbt derives";
}

TEST(PbtSampler, PerturbsEachNumericParameterByAFactorAndMovesChoicesToANeighbour) {
  const StudyConfig config = Pbt(0.0);
  std::unique_ptr<Sampler> sampler = MakeSampler(config).value();
  const ParamSet parent = {{"lr", 0.01},
                           {"x", 1.0},
                           {"q", 0.4},
                           {"n", std::int64_t{3}},
                           {"c", std::int64_t{32}},
                           {"b", std::int64_t{100}},
                           {"opt", std::string("adam")},
                           {"fixed", std::int64_t{42}}};
  std::set<std::string> choices;
  for (std::int64_t n = 100; n < 160; ++n) {
    const ParamSet child = *sampler->Derive(n, parent);
    ExpectValid(config.space, child);
    for (const ParamSpec& spec : config.space.params()) {
      if (spec.kind != ParamKind::kFloat && spec.kind != ParamKind::kInt) continue;
      if (!child.count(spec.name) || !parent.count(spec.name)) continue;
      const double was = AsNumber(parent.at(spec.name)), now = AsNumber(child.at(spec.name));
      EXPECT_TRUE(now == SearchSpace::Snap(spec, was * 0.5) || now == SearchSpace::Snap(spec, was * 2.0))
          << spec.name << ": " << was << " -> " << now;
    }
    EXPECT_EQ(child.at("fixed"), parent.at("fixed"));
    choices.insert(std::get<std::string>(child.at("opt")));
  }
  // adam's neighbours are sgd and adamw; sgd makes m active, drawn at random (ExpectValid).
  EXPECT_EQ(choices, (std::set<std::string>{"sgd", "adamw"}));
}

TEST(PbtSampler, ResamplesWithItsProbability) {
  const StudyConfig config = Pbt(1.0);
  std::unique_ptr<Sampler> sampler = MakeSampler(config).value();
  const ParamSet parent = *sampler->Ask(0, TrialHistory{});
  int moved_off_the_factors = 0;
  for (std::int64_t n = 100; n < 140; ++n) {
    const ParamSet child = *sampler->Derive(n, parent);
    ExpectValid(config.space, child);
    const double was = AsNumber(parent.at("x")), now = AsNumber(child.at("x"));
    const ParamSpec& x = *std::find_if(config.space.params().begin(), config.space.params().end(),
                                       [](const ParamSpec& s) { return s.name == "x"; });
    moved_off_the_factors += now != SearchSpace::Snap(x, was * 0.5) && now != SearchSpace::Snap(x, was * 2.0);
  }
  EXPECT_GT(moved_off_the_factors, 30) << "drawn afresh, x rarely lands on a perturbation";
}

}  // namespace
}  // namespace cleansweep
