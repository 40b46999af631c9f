// Define-by-run: parameters a trial asks for while it runs (docs/trial-protocol.md), as requests
// are checked and as each sampler draws them.
#include "space/trial_defined.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "samplers/sampler.hpp"
#include "support/sampler_fixtures.hpp"

namespace cleansweep {
namespace {

Result<ParamSpec> Parse(const std::string& text) { return ParseSuggestRequest(nlohmann::json::parse(text)); }

std::string ErrorOf(const std::string& text) {
  const Result<ParamSpec> spec = Parse(text);
  EXPECT_FALSE(spec.ok()) << text;
  return spec.ok() ? "" : spec.status().message();
}

TEST(SuggestRequest, ReadsOptunasThreeKindsAndRoundTripsTheirDistribution) {
  const Result<ParamSpec> lr = Parse(R"({"name": "lr", "type": "float", "low": 1e-5, "high": 0.1, "log": true})");
  ASSERT_TRUE(lr.ok()) << lr.status().message();
  EXPECT_EQ(lr->kind, ParamKind::kFloat);
  EXPECT_TRUE(lr->log);
  const Result<ParamSpec> units = Parse(R"({"name": "n_units_l0", "type": "int", "low": 4, "high": 10, "step": 4})");
  ASSERT_TRUE(units.ok()) << units.status().message();
  EXPECT_EQ(units->high, 8);  // as Optuna: a high off the step's grid comes down onto it
  const Result<ParamSpec> opt = Parse(R"({"name": "optimizer", "type": "categorical", "choices": ["adam", 3, true]})");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  EXPECT_EQ(opt->choices.size(), 3u);
  for (const ParamSpec& spec : {*lr, *units, *opt}) {
    const Result<ParamSpec> back = DistributionFromJson(spec.name, DistributionJson(spec));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(SameDistribution(spec, *back)) << DistributionJson(spec);
  }
  EXPECT_FALSE(SameDistribution(*lr, *Parse(R"({"name": "lr", "type": "float", "low": 1e-5, "high": 0.1})")));
  EXPECT_EQ(DescribeDistribution(*lr), "float in [1e-05, 0.1], log");
}

TEST(SuggestRequest, RefusesAbsurdOrMalformedRequestsSayingWhy) {
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "float", "low": -1e300, "high": 1e300})").find("beyond +-2^53"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "float", "low": 2, "high": 1})").find("above high"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "float", "low": 0, "high": 1, "log": true})").find("low > 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "int", "low": 0.5, "high": 3})").find("whole number"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "int", "low": 0, "high": 9e15, "step": 0.001})").find("whole"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "float", "low": 0.1, "high": 1, "step": 0.1, "log": true})")
                .find("log or a step"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "uniform", "low": 0, "high": 1})").find("float, int or categorical"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "bad name", "type": "float", "low": 0, "high": 1})").find("letters, digits"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "categorical", "choices": []})").find("non-empty"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "type": "categorical", "choices": [null]})").find("None is not a choice"),
            std::string::npos);
  nlohmann::json many = {{"name", "x"}, {"type", "categorical"}, {"choices", nlohmann::json::array()}};
  for (int i = 0; i < 200; ++i) many["choices"].push_back("choice-" + std::to_string(i));
  const Result<ParamSpec> big = ParseSuggestRequest(many);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("declare it under space:"), std::string::npos);
}

std::unique_ptr<Sampler> Make(const StudyConfig& config) {
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
  EXPECT_TRUE(sampler.ok()) << sampler.status().message();
  return sampler.ok() ? std::move(*sampler) : nullptr;
}

StudyConfig Undeclared(const std::string& sampler) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: t}\nsampler: " + sampler + "\ntrial: {command: [p]}\n", "t.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

TEST(TrialDefinedSampling, SamplersOfADeclaredSpaceRefuseAConfigWithoutOne) {
  for (const char* kind : {"grid", "cmaes", "sobol", "nsga2", "pbt"}) {
    const std::string extra = std::string(kind) == "pbt" ? ", interval: 2" : "";
    Result<std::unique_ptr<Sampler>> sampler = MakeSampler(Undeclared(std::string("{kind: ") + kind + extra + "}"));
    ASSERT_FALSE(sampler.ok()) << kind;
    EXPECT_NE(sampler.status().message().find("declares none"), std::string::npos) << sampler.status().message();
  }
  for (const char* kind : {"random", "tpe", "gp"}) {
    EXPECT_TRUE(MakeSampler(Undeclared(std::string("{kind: ") + kind + "}")).ok()) << kind;
  }
}

TEST(TrialDefinedSampling, TheGridRefusesAParameterItDoesNotDeclare) {
  std::unique_ptr<Sampler> grid =
      Make(testing::SamplerConfig("  a: {type: categorical, choices: [1, 2]}\n", "{kind: grid}"));
  const Result<ParamValue> v = grid->SuggestTrialDefined(0, *Parse(R"({"name": "b", "type": "float", "low": 0,
                                                                      "high": 1})"),
                                                         {}, {});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("add 'b' to space:"), std::string::npos) << v.status().message();
}

// Runs `n` trials that each ask for x and y as they run; returns the losses in order.
std::vector<double> RunDefineByRun(Sampler& sampler, int n, const std::function<double(double, double)>& loss) {
  const ParamSpec x = *Parse(R"({"name": "x", "type": "float", "low": -5, "high": 5})");
  const ParamSpec y = *Parse(R"({"name": "y", "type": "float", "low": -5, "high": 5})");
  TrialHistory history;
  std::vector<double> losses;
  for (int i = 0; i < n; ++i) {
    ParamSet params = *sampler.Ask(i, history);
    history.running[i] = params;
    for (const ParamSpec* spec : {&x, &y}) {
      const Result<ParamValue> v = sampler.SuggestTrialDefined(i, *spec, params, history);
      EXPECT_TRUE(v.ok()) << v.status().message();
      params[spec->name] = *v;
      history.running[i][spec->name] = *v;
      history.trial_defined[spec->name] = DistributionJson(*spec);
    }
    history.running.erase(i);
    const double l = loss(std::get<double>(params.at("x")), std::get<double>(params.at("y")));
    TrialRecord r = testing::Finished(i, params, l);
    r.distributions = {{"x", DistributionJson(x)}, {"y", DistributionJson(y)}};
    history.finished.push_back(r);
    losses.push_back(l);
  }
  return losses;
}

double Best(const std::vector<double>& losses) { return *std::min_element(losses.begin(), losses.end()); }

// TPE and the GP learn the parameters the trials define from the trials that had them: over the
// same budget both find a better point than independent random draws (seeded: deterministic).
TEST(TrialDefinedSampling, TpeAndTheGpLearnTrialDefinedParametersRandomDoesNot) {
  const auto loss = [](double x, double y) { return (x - 1.7) * (x - 1.7) + (y + 2.2) * (y + 2.2); };
  std::unique_ptr<Sampler> random = Make(Undeclared("{kind: random, seed: 3}"));
  std::unique_ptr<Sampler> tpe = Make(Undeclared("{kind: tpe, seed: 3}"));
  std::unique_ptr<Sampler> gp = Make(Undeclared("{kind: gp, seed: 3}"));
  const double random_best = Best(RunDefineByRun(*random, 40, loss));
  const double tpe_best = Best(RunDefineByRun(*tpe, 40, loss));
  const double gp_best = Best(RunDefineByRun(*gp, 40, loss));
  EXPECT_LT(tpe_best, random_best);
  EXPECT_LT(gp_best, random_best);
  EXPECT_LT(gp_best, 0.05);  // the GP over the shared x, y: a 2-D quadratic is its home ground
}

TEST(TrialDefinedSampling, TwoParametersOfOneTrialAreDrawnIndependently) {
  std::unique_ptr<Sampler> random = Make(Undeclared("{kind: random, seed: 1}"));
  const ParamSpec a = *Parse(R"({"name": "a", "type": "float", "low": 0, "high": 1})");
  const ParamSpec b = *Parse(R"({"name": "b", "type": "float", "low": 0, "high": 1})");
  const ParamValue va = *random->SuggestTrialDefined(7, a, {}, {});
  EXPECT_NE(std::get<double>(va), std::get<double>(*random->SuggestTrialDefined(7, b, {}, {})));
  EXPECT_EQ(std::get<double>(va), std::get<double>(*random->SuggestTrialDefined(7, a, {}, {})));  // (seed, trial, name)
}

}  // namespace
}  // namespace cleansweep
