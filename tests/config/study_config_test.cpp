#include "config/study_config.hpp"

#include <cmath>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "config/sampler_choice.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

const char* kGood = R"(study: {name: demo, direction: maximize, n_trials: 12, time_budget: 1h, storage: out/demo.h5}
sampler: {kind: random, seed: 7}
trial: {command: ["prog", "--lr={lr}", "--trial", "{trial}"], timeout: 10m}
space:
  lr:         {type: float, low: 1.0e-4, high: 0.3, log: true}
  batch_size: {type: int, low: 16, high: 256, log: true}
  channels:   {type: int, low: 8, high: 64, step: 8}
  optimizer:  {type: categorical, choices: [sgd, adam, adamw]}
  momentum:   {type: float, low: 0.0, high: 0.99, when: {optimizer: sgd}}
  flag:       {type: categorical, choices: [true, false, 3, 2.5, "yes"]}
  epochs:     5
)";

// Replaces the first occurrence of `from` in kGood.
std::string GoodWith(const std::string& from, const std::string& to) {
  std::string text = kGood;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string ErrorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  Result<StudyConfig> config = LoadConfigText(text, "cfg.yaml", sets);
  EXPECT_FALSE(config.ok());
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), Status::Code::kInvalidInput);
  return config.status().message();
}

TEST(StudyConfig, ParsesEveryKind) {
  Result<StudyConfig> config = LoadConfigText(kGood, "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->study.name, "demo");
  EXPECT_EQ(config->study.direction, Direction::kMaximize);
  EXPECT_EQ(config->study.n_trials, 12);
  EXPECT_EQ(config->study.time_budget->count(), 3'600'000);
  EXPECT_EQ(config->study.storage, "out/demo.h5");
  EXPECT_EQ(config->sampler.seed, 7u);
  EXPECT_EQ(config->trial.timeout->count(), 600'000);
  ASSERT_EQ(config->space.params().size(), 7u);
  const ParamSpec* lr = config->space.Find("lr");
  EXPECT_EQ(lr->kind, ParamKind::kFloat);
  EXPECT_TRUE(lr->log);
  const ParamSpec* channels = config->space.Find("channels");
  EXPECT_EQ(channels->kind, ParamKind::kInt);
  EXPECT_EQ(*channels->step, 8);
  const ParamSpec* momentum = config->space.Find("momentum");
  ASSERT_EQ(momentum->when.size(), 1u);
  EXPECT_EQ(momentum->when[0].parent, "optimizer");
  const ParamSpec* flag = config->space.Find("flag");
  ASSERT_EQ(flag->choices.size(), 5u);
  EXPECT_EQ(flag->choices[0], ParamValue(true));
  EXPECT_EQ(flag->choices[2], ParamValue(std::int64_t{3}));
  EXPECT_EQ(flag->choices[3], ParamValue(2.5));
  EXPECT_EQ(flag->choices[4], ParamValue(std::string("yes")));  // quoted text stays text
  EXPECT_EQ(config->space.Find("epochs")->kind, ParamKind::kFixed);
}

TEST(StudyConfig, DefaultStorageFollowsTheName) {
  Result<StudyConfig> config = LoadConfigText(GoodWith(", storage: out/demo.h5", ""), "cfg.yaml");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->study.storage, "results/demo.h5");
}

TEST(StudyConfig, TrialFoldersGoBesideTheStudyFileOrUnderTrialsDir) {
  Result<StudyConfig> beside = LoadConfigText(kGood, "cfg.yaml");
  ASSERT_TRUE(beside.ok());
  EXPECT_EQ(TrialsRoot(beside->study), (std::filesystem::current_path() / "out/demo.trials").string());
  Result<StudyConfig> moved =
      LoadConfigText(GoodWith("storage: out/demo.h5", "storage: out/demo.h5, trials_dir: /scratch/me"), "cfg.yaml");
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(TrialsRoot(moved->study), "/scratch/me/demo.trials");  // a folder of its own in there
  // Shards keep apart: the shard's file name carries its tag, and so does its trial folder.
  Result<StudyConfig> shard = LoadConfigText(kGood, "cfg.yaml", {"study.trials_dir=/scratch/me", "study.shard=2/4"});
  ASSERT_TRUE(shard.ok()) << shard.status().message();
  EXPECT_EQ(TrialsRoot(shard->study), "/scratch/me/demo-shard-2-of-4.trials");
  EXPECT_EQ(ErrorOf(GoodWith("storage: out/demo.h5", "storage: out/demo.h5, trials_dir: ''")),
            "cfg.yaml:1:107: study.trials_dir: must be a folder path");
}

TEST(StudyConfig, OverridesReplaceValuesAndAreStored) {
  Result<StudyConfig> config =
      LoadConfigText(kGood, "cfg.yaml", {"study.n_trials=8", "sampler.seed=99", "space.lr.high=0.1", "trial.env.A=b"});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->study.n_trials, 8);
  EXPECT_EQ(config->sampler.seed, 99u);
  EXPECT_EQ(config->space.Find("lr")->high, 0.1);
  EXPECT_EQ(config->trial.env.at("A"), "b");
  // The stored text is the effective config: loading it again gives the same values.
  Result<StudyConfig> again = LoadConfigText(config->yaml_text, "stored");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->study.n_trials, 8);
}

TEST(StudyConfig, BadOverridesNameTheFlag) {
  EXPECT_EQ(ErrorOf(kGood, {"study.n_trials=many"}), "--set study.n_trials: expected a whole number, got 'many'");
  EXPECT_NE(ErrorOf(kGood, {"n_trials"}).find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"study.bogus=1"}).find("--set study.bogus: unknown key"), std::string::npos);
}

TEST(StudyConfig, SyntaxErrorGivesLineAndColumn) {
  EXPECT_NE(ErrorOf("study: {name: x\nspace: [").find("cfg.yaml:"), std::string::npos);
  EXPECT_NE(ErrorOf("study: {name: x\nspace: [").find("YAML syntax error"), std::string::npos);
}

TEST(StudyConfig, UnknownKeysListWhatIsAllowed) {
  const std::string top = ErrorOf(std::string(kGood) + "extra: 1\n");
  EXPECT_NE(
      top.find(
          "cfg.yaml:12:1: extra: unknown key (allowed here: study, sampler, pruner, trial, space, workers, enqueue)"),
      std::string::npos)
      << top;
  const std::string nested = ErrorOf(GoodWith("n_trials: 12", "n_trails: 12"));
  EXPECT_NE(nested.find("study.n_trails: unknown key"), std::string::npos) << nested;
  EXPECT_NE(nested.find("cfg.yaml:1:"), std::string::npos) << nested;
  EXPECT_NE(ErrorOf(GoodWith("log: true}", "log: true, scale: 2}")).find("space.lr.scale: unknown key"),
            std::string::npos);
}

TEST(StudyConfig, WrongTypes) {
  EXPECT_NE(ErrorOf(GoodWith("n_trials: 12", "n_trials: twelve"))
                .find("study.n_trials: expected a whole number, got 'twelve'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("low: 1.0e-4", "low: small")).find("cfg.yaml:5:"), std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("low: 16", "low: 16.5")).find("space.batch_size.low: expected a whole number"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("log: true}", "log: maybe}")).find("space.lr.log: expected true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: soon")).find("trial.timeout: 'soon' is not a duration"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith(R"(command: ["prog", "--lr={lr}", "--trial", "{trial}"])", "command: prog"))
                .find("trial.command: expected a list of words"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("direction: maximize", "direction: up")).find("must be minimize or maximize"),
            std::string::npos);
}

TEST(StudyConfig, BoundsMustMakeARange) {
  EXPECT_NE(
      ErrorOf(GoodWith("low: 8, high: 64", "low: 64, high: 8")).find("space.channels.low: low must be below high"),
      std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("low: 8, high: 64", "low: 8, high: 8")).find("low must be below high"), std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("low: 1.0e-4", "low: 0")).find("space.lr.low: a log scale needs low > 0, got 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("low: 1.0e-4", "low: -1")).find("a log scale needs low > 0"), std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("step: 8", "step: 0")).find("step must be > 0"), std::string::npos);
}

TEST(StudyConfig, ChoicesMustBeAListOfDistinctValues) {
  EXPECT_NE(ErrorOf(GoodWith("choices: [sgd, adam, adamw]", "choices: []"))
                .find("space.optimizer.choices: needs at least one choice"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("choices: [sgd, adam, adamw]", "choices: [sgd, sgd]")).find("choice sgd appears twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{type: categorical, choices: [sgd, adam, adamw]}", "{type: categorical}"))
                .find("missing `choices`"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("type: categorical", "type: choice"))
                .find("unknown type 'choice' (allowed: float, int, categorical, fixed)"),
            std::string::npos);
}

TEST(StudyConfig, WhenMustNameAParameter) {
  const std::string e = ErrorOf(GoodWith("when: {optimizer: sgd}", "when: {optimiser: sgd}"));
  EXPECT_NE(e.find("parameter 'momentum': `when` names 'optimiser', which is not a parameter"), std::string::npos) << e;
}

TEST(StudyConfig, WhenCyclesAreRefused) {
  const std::string e =
      ErrorOf(GoodWith("optimizer:  {type: categorical, choices: [sgd, adam, adamw]}",
                       "optimizer:  {type: categorical, choices: [sgd, adam, adamw], when: {momentum: 0.5}}"));
  EXPECT_NE(e.find("form a cycle"), std::string::npos) << e;
}

TEST(StudyConfig, UnknownSamplerListsTheKnownOnes) {
  EXPECT_NE(ErrorOf(GoodWith("kind: random", "kind: tpe2"))
                .find("sampler.kind: unknown sampler 'tpe2' (available: auto, random, grid, tpe, gp, sobol, cmaes, "
                      "nsga2, pbt)"),
            std::string::npos);
}

// `sampler` omitted or `kind: auto`: the rule of config/sampler_choice.hpp decides, and says why.
TEST(StudyConfig, AutoIsTheDefaultAndSaysWhatItChose) {
  // kGood's space: 7 model dimensions (momentum is conditional: 2), 12 trials.
  for (const std::string& sampler : {std::string(""), std::string("sampler: {kind: auto, seed: 7}\n")}) {
    Result<StudyConfig> config = LoadConfigText(GoodWith("sampler: {kind: random, seed: 7}\n", sampler), "cfg.yaml");
    ASSERT_TRUE(config.ok()) << config.status().message();
    EXPECT_EQ(config->sampler.kind, "gp");
    EXPECT_EQ(config->sampler.reason, "auto: 7 dimensions, 12 trials (the GP for up to " +
                                          std::to_string(kAutoGpMaxDimensions) + " dimensions and " +
                                          std::to_string(kAutoGpMaxTrials) + " trials)");
  }
  EXPECT_EQ(LoadConfigText(kGood, "cfg.yaml")->sampler.reason, "");  // named: no reason to give

  // A long study: TPE, whose asks stay cheap.
  Result<StudyConfig> longer = LoadConfigText(
      GoodWith("n_trials: 12", "n_trials: " + std::to_string(kAutoGpMaxTrials + 1)), "cfg.yaml", {"sampler.kind=auto"});
  ASSERT_TRUE(longer.ok()) << longer.status().message();
  EXPECT_EQ(longer->sampler.kind, "tpe");
  EXPECT_NE(longer->sampler.reason.find(std::to_string(kAutoGpMaxTrials + 1) + " trials"), std::string::npos);

  // Many dimensions: TPE.
  std::string wide = "study: {name: wide, n_trials: 50}\ntrial: {command: [x]}\nspace:\n";
  for (int k = 0; k <= kAutoGpMaxDimensions; ++k)
    wide += "  x" + std::to_string(k) + ": {type: float, low: 0, high: 1}\n";
  Result<StudyConfig> many = LoadConfigText(wide, "wide.yaml");
  ASSERT_TRUE(many.ok()) << many.status().message();
  EXPECT_EQ(many->sampler.kind, "tpe");
  EXPECT_EQ(many->sampler.reason, "auto: " + std::to_string(kAutoGpMaxDimensions + 1) +
                                      " dimensions, 50 trials (the GP for up to " +
                                      std::to_string(kAutoGpMaxDimensions) + " dimensions)");

  // Nothing to search.
  Result<StudyConfig> fixed =
      LoadConfigText("study: {name: f}\ntrial: {command: [x]}\nspace:\n  epochs: 5\n", "fixed.yaml");
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_EQ(fixed->sampler.kind, "tpe");

  // Settings belong to a named sampler.
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: auto, n_candidates: 64}"))
                .find("sampler.n_candidates: does not apply to kind auto, which picks the sampler itself; name one "
                      "(kind: gp, tpe, ...) to tune its settings"),
            std::string::npos);
}

TEST(StudyConfig, PlaceholdersMustNameParameters) {
  EXPECT_NE(ErrorOf(GoodWith("--lr={lr}", "--lr={learning_rate}"))
                .find("trial.command[1]: placeholder {learning_rate} names no parameter"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("--lr={lr}", "--lr={lr")).find("unclosed '{'"), std::string::npos);
  EXPECT_TRUE(LoadConfigText(GoodWith("\"--lr={lr}\"", R"('--json={{"a": 1}}')"), "cfg.yaml").ok());
}

TEST(StudyConfig, MissingSectionsSayWhatIsNeeded) {
  EXPECT_NE(ErrorOf("sampler: {kind: random}\n").find("study: missing"), std::string::npos);
  EXPECT_NE(ErrorOf("study: {name: x}\nspace: {a: 1}\n").find("trial: missing"), std::string::npos);
  EXPECT_NE(ErrorOf("- 1\n- 2\n").find("expected a mapping"), std::string::npos);
}

// Define-by-run: without space: the trial defines every parameter as it runs; the samplers that
// search only a declared space say so.
TEST(StudyConfig, SpaceIsOptionalAndAnObjectIsACommand) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: x}\ntrial: {objective: \"train.py:objective\"}\n", "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(config->space.params().empty());
  EXPECT_EQ(config->sampler.kind, "tpe");
  EXPECT_NE(config->sampler.reason.find("the trial defines its parameters"), std::string::npos);
  EXPECT_EQ(config->trial.command,
            (std::vector<std::string>{"python3", "-m", "cleansweep_trial", "train.py:objective"}));
  EXPECT_NE(ErrorOf("study: {name: x}\ntrial: {objective: train.py}\n").find("expected FILE.py:FUNCTION"),
            std::string::npos);
  EXPECT_NE(ErrorOf("study: {name: x}\ntrial: {objective: \"t.py:f\", command: [a]}\n").find("not both"),
            std::string::npos);
}

TEST(StudyConfig, ParameterNamesAreIdentifiers) {
  EXPECT_NE(ErrorOf(GoodWith("epochs:     5", "2epochs: 5")).find("parameter names use letters"), std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("epochs:     5", "trial: 5")).find("reserved"), std::string::npos);
}

TEST(StudyConfig, EnqueuedConfigurationsAreCheckedAgainstTheSpace) {
  Result<StudyConfig> config = LoadConfigText(
      std::string(kGood) +
          "enqueue:\n  - {lr: 0.01, batch_size: 32, optimizer: sgd, momentum: 0.9}\n  - {channels: 16}\n",
      "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->enqueue.size(), 2u);
  EXPECT_EQ(config->enqueue[0].at("batch_size"), ParamValue(std::int64_t{32}));
  EXPECT_NE(ErrorOf(std::string(kGood) + "enqueue:\n  - {lr: 1}\n").find("enqueue[0].lr: 1 is not a number"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(std::string(kGood) + "enqueue:\n  - {lr: 5}\n").find("enqueue[0].lr: 5 is not a number in [0.0001, 0.3]"),
      std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "enqueue:\n  - {channels: 12}\n").find("is not on the step 8"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(std::string(kGood) + "enqueue:\n  - {optimizer: rmsprop}\n").find("rmsprop is not one of the choices"),
      std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "enqueue:\n  - {depth: 3}\n").find("enqueue[0].depth: names no parameter"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "enqueue:\n  - {optimizer: adam, momentum: 0.5}\n")
                .find("enqueue[0].momentum: is inactive with the other values of this entry"),
            std::string::npos);
}

TEST(StudyConfig, GpSamplerOptions) {
  Result<StudyConfig> config = LoadConfigText(
      GoodWith("{kind: random, seed: 7}",
               "{kind: gp, n_startup_trials: 8, n_candidates: 256, n_local_searches: 2, max_points: 400, "
               "deterministic: true, fantasize: false}"),
      "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->sampler.n_startup_trials, 8);
  EXPECT_EQ(config->sampler.n_candidates, 256);
  EXPECT_EQ(config->sampler.n_local_searches, 2);
  EXPECT_EQ(config->sampler.max_points, 400);
  EXPECT_TRUE(config->sampler.deterministic);
  EXPECT_FALSE(config->sampler.fantasize);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: gp, gamma: 0.2}"))
                .find("sampler.gamma: does not apply to the gp sampler"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: gp, max_points: 5}")).find("sampler.max_points"),
            std::string::npos);
}

TEST(StudyConfig, SamplerOptionsBelongToTheirKind) {
  Result<StudyConfig> config = LoadConfigText(
      GoodWith("{kind: random, seed: 7}", "{kind: tpe, n_startup_trials: 5, gamma: 0.2, multivariate: false}"),
      "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->sampler.n_startup_trials, 5);
  EXPECT_EQ(config->sampler.gamma, 0.2);
  EXPECT_FALSE(config->sampler.multivariate);
  EXPECT_TRUE(config->sampler.constant_liar);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: random, gamma: 0.2}"))
                .find("sampler.gamma: does not apply to the random sampler"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: tpe, gamma: 1.5}")).find("sampler.gamma: must be in (0, 1]"),
      std::string::npos);
}

TEST(StudyConfig, PrunerOptionsAndOptunasDefaults) {
  Result<StudyConfig> asha = LoadConfigText(std::string(kGood) + "pruner: {kind: asha, min_resource: 2}\n", "cfg.yaml");
  ASSERT_TRUE(asha.ok()) << asha.status().message();
  EXPECT_EQ(asha->pruner.reduction_factor, 4);
  EXPECT_EQ(asha->pruner.min_resource, 2);
  Result<StudyConfig> hb =
      LoadConfigText(std::string(kGood) + "pruner: {kind: hyperband, max_resource: 27}\ntrial2: 1\n", "cfg.yaml");
  EXPECT_FALSE(hb.ok());
  hb = LoadConfigText(std::string(kGood) + "pruner: {kind: hyperband, max_resource: 27}\n", "cfg.yaml");
  ASSERT_TRUE(hb.ok()) << hb.status().message();
  EXPECT_EQ(hb->pruner.reduction_factor, 3);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: hyperband}\n").find("hyperband needs max_resource"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: median, reduction_factor: 3}\n")
                .find("pruner.reduction_factor: does not apply to the median pruner"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: asha, reduction_factor: 1}\n").find("must be at least 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: early}\n").find("unknown pruner 'early'"), std::string::npos);
  // Issue 17: rungs that pause and resume, for the pruners that have rungs.
  EXPECT_FALSE(asha->pruner.resume);
  Result<StudyConfig> pausing = LoadConfigText(std::string(kGood) + "pruner: {kind: asha, resume: true}\n", "cfg.yaml");
  ASSERT_TRUE(pausing.ok()) << pausing.status().message();
  EXPECT_TRUE(pausing->pruner.resume);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: median, resume: true}\n")
                .find("pruner.resume: does not apply to the median pruner"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kGood) + "pruner: {kind: hyperband, max_resource: 9, resume: sometimes}\n")
                .find("pruner.resume"),
            std::string::npos);
}

// Issue 17: population-based training's options, and what it cannot work with.
TEST(StudyConfig, PbtOptionsAndWhatItRefuses) {
  const std::string pbt =
      "{kind: pbt, seed: 7, population: 4, interval: 2, quantile: 0.5, perturb: [0.5, 2], "
      "resample_probability: 0.1}";
  Result<StudyConfig> config = LoadConfigText(GoodWith("{kind: random, seed: 7}", pbt), "cfg.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->sampler.population, 4);
  EXPECT_EQ(config->sampler.interval, 2);
  EXPECT_DOUBLE_EQ(config->sampler.quantile, 0.5);
  EXPECT_EQ(config->sampler.perturb, (std::vector<double>{0.5, 2}));
  EXPECT_DOUBLE_EQ(config->sampler.resample_probability, 0.1);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: pbt}")).find("pbt needs sampler.interval"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: pbt, interval: 2, quantile: 0.7}"))
                .find("sampler.quantile: must be in (0, 0.5]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: pbt, interval: 2, perturb: [0.8, -1]}"))
                .find("sampler.perturb: factors must be > 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: pbt, interval: 2, population: 13}"))
                .find("study.n_trials: counts the pbt population's 13 members"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: pbt, interval: 2, population: 4}") + "pruner: {kind: asha}\n")
          .find("pbt stops and replaces its members itself"),
      std::string::npos);
  std::string keep_none = GoodWith("{kind: random, seed: 7}", "{kind: pbt, interval: 2, population: 4}");
  keep_none.replace(keep_none.find("timeout: 10m}"), 13, "timeout: 10m, checkpoint_keep: none}");
  EXPECT_NE(ErrorOf(keep_none).find("trial.checkpoint_keep: none would remove"), std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("{kind: random, seed: 7}", "{kind: random, seed: 7, interval: 2}"))
                .find("sampler.interval: does not apply to the random sampler"),
            std::string::npos);
}

TEST(StudyConfig, MissingFileIsBadInput) {
  Result<StudyConfig> config = LoadConfigFile("/nonexistent/cfg.yaml", {});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Status::Code::kInvalidInput);
  EXPECT_NE(config.status().message().find("/nonexistent/cfg.yaml: cannot open the config file"), std::string::npos);
}

TEST(Placeholders, FindsNamesAndEscapes) {
  EXPECT_EQ(*PlaceholdersIn("--lr={lr}/{trial}"), (std::vector<std::string>{"lr", "trial"}));
  EXPECT_TRUE(PlaceholdersIn("{{literal}}")->empty());
  EXPECT_FALSE(PlaceholdersIn("a}b").ok());
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

TEST(StudyConfig, ReliabilityOptionsHaveSafeDefaultsAndParse) {
  Result<StudyConfig> defaults = LoadConfigText(kGood, "c.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->trial.retries, 0);
  EXPECT_EQ(defaults->trial.retry_on, (std::set<TrialState>{TrialState::kCrash, TrialState::kTimeout}));
  EXPECT_EQ(defaults->trial.memory_limit_bytes, 0);
  EXPECT_EQ(defaults->trial.stop_grace, Millis(10'000));
  EXPECT_EQ(defaults->trial.checkpoint_keep, CheckpointKeep::kLast);
  for (const auto& [text, keep] : {std::pair{"all", CheckpointKeep::kAll}, std::pair{"none", CheckpointKeep::kNone}}) {
    Result<StudyConfig> c = LoadConfigText(kGood, "c.yaml", {std::string("trial.checkpoint_keep=") + text});
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->trial.checkpoint_keep, keep);
  }
  Result<StudyConfig> set = LoadConfigText(
      kGood, "c.yaml",
      {"trial.retries=3", "trial.retry_on=[oom_gpu, CRASH, fail]", "trial.memory_limit=1.5G", "trial.stop_grace=2m"});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->trial.retries, 3);
  EXPECT_EQ(set->trial.retry_on, (std::set<TrialState>{TrialState::kOomGpu, TrialState::kCrash, TrialState::kFail}));
  EXPECT_EQ(set->trial.memory_limit_bytes, 1610612736);
  EXPECT_EQ(set->trial.stop_grace, Millis(120'000));
}

TEST(StudyConfig, ReliabilityOptionsRefuseNonsense) {
  EXPECT_NE(ErrorOf(kGood, {"trial.retries=-1"}).find("trial.retries: must be between 0 and 100"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"trial.retry_on=[complete]"}).find("unknown failure 'complete'"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"trial.retry_on=crash"}).find("expected a list of states"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"trial.memory_limit=8Q"}).find("not a memory size"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"trial.stop_grace=soon"}).find("trial.stop_grace"), std::string::npos);
  EXPECT_NE(ErrorOf(kGood, {"trial.checkpoint_keep=first"}).find("trial.checkpoint_keep: expected last"),
            std::string::npos);
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

TEST(StudyConfig, TheLauncherIsSpawnUnlessTheForkServerIsAskedFor) {
  Result<StudyConfig> defaults = LoadConfigText(kGood, "c.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->trial.launcher, LauncherKind::kSpawn);
  Result<StudyConfig> fork = LoadConfigText(kGood, "c.yaml", {"trial.launcher=forkserver"});
  ASSERT_TRUE(fork.ok()) << fork.status().message();
  EXPECT_EQ(fork->trial.launcher, LauncherKind::kForkServer);
  const std::string error = ErrorOf(kGood, {"trial.launcher=vfork"});
  EXPECT_NE(error.find("trial.launcher: expected spawn"), std::string::npos) << error;
}

// Issue 19: the fork server preforks the next trial unless told not to; spawn cannot.
TEST(StudyConfig, PreforkIsTheForkServersDefaultAndRefusedWithSpawn) {
  Result<StudyConfig> spawn = LoadConfigText(kGood, "c.yaml");
  ASSERT_TRUE(spawn.ok());
  EXPECT_FALSE(spawn->trial.prefork);
  Result<StudyConfig> fork = LoadConfigText(kGood, "c.yaml", {"trial.launcher=forkserver"});
  ASSERT_TRUE(fork.ok()) << fork.status().message();
  EXPECT_TRUE(fork->trial.prefork);
  Result<StudyConfig> off = LoadConfigText(kGood, "c.yaml", {"trial.launcher=forkserver", "trial.prefork=false"});
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_FALSE(off->trial.prefork);
  const std::string error = ErrorOf(kGood, {"trial.prefork=true"});
  EXPECT_NE(error.find("trial.prefork: needs trial.launcher: forkserver"), std::string::npos) << error;
}

TEST(StudyConfig, WorkerQueueIsAutoZeroOrACount) {
  Result<StudyConfig> defaults = LoadConfigText(kGood, "c.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->workers.queue) << "auto";
  for (const auto& [text, depth] : {std::pair{"auto", -1}, std::pair{"0", 0}, std::pair{"1", 1}, std::pair{"4", 4}}) {
    Result<StudyConfig> config = LoadConfigText(kGood, "c.yaml", {std::string("workers.queue=") + text});
    ASSERT_TRUE(config.ok()) << text << ": " << config.status().message();
    EXPECT_EQ(config->workers.queue.value_or(-1), depth) << text;
  }
  for (const char* bad : {"5", "-1", "lots", "0.5"}) {
    const std::string error = ErrorOf(kGood, {std::string("workers.queue=") + bad});
    EXPECT_NE(error.find("workers.queue"), std::string::npos) << bad << ": " << error;
  }
}

// Issue 15: duplicate keys were accepted silently (the CSV then had two param_x columns).
TEST(StudyConfig, ADuplicateKeyAtAnyLevelIsRefusedWithBothLines) {
  std::string error = ErrorOf(std::string(kGood) + "  lr: {type: float, low: 0.1, high: 0.2}\n");
  EXPECT_NE(error.find("cfg.yaml:12:3: space.lr: appears twice in one mapping (lines 5 and 12)"), std::string::npos)
      << error;
  error = ErrorOf(std::string(kGood) + "study: {name: other}\n");
  EXPECT_NE(error.find("study: appears twice in one mapping (lines 1 and 12)"), std::string::npos) << error;
  error = ErrorOf(GoodWith("seed: 7}", "seed: 7, seed: 8}"));
  EXPECT_NE(error.find("sampler.seed: appears twice"), std::string::npos) << error;
}

// Issue 15: a categorical choice "a\0b" reached the trial as "a".
TEST(StudyConfig, TextWithANulByteOrInvalidUtf8IsRefused) {
  std::string error = ErrorOf(GoodWith("choices: [sgd, adam, adamw]", "choices: [sgd, \"a\\0b\"]"));
  EXPECT_NE(error.find("space.optimizer.choices[1]: text contains a NUL byte"), std::string::npos) << error;
  error = ErrorOf(GoodWith("name: demo", "name: \"de\\0mo\""));
  EXPECT_NE(error.find("study.name: text contains a NUL byte"), std::string::npos) << error;
  error = ErrorOf(GoodWith("name: demo", "name: de\xFFmo"));
  EXPECT_NE(error.find("study.name: text is not valid UTF-8"), std::string::npos) << error;
  error = ErrorOf(kGood, {"study.name=\"x\\0y\""});
  EXPECT_NE(error.find("--set study.name: text contains a NUL byte"), std::string::npos) << error;
}

TEST(StudyConfig, NestingAliasBombsAndHugeTextsAreRefusedQuickly) {
  std::string deep = std::string(kGood) + "enqueue: ";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  EXPECT_NE(ErrorOf(deep + "\n").find("nested deeper than 32 levels"), std::string::npos);
  std::string laughs = std::string(kGood) + "workers: {x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    laughs += ", x" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 0; k < 9; ++k) laughs += ", " + prev;
    laughs += "]";
  }
  EXPECT_NE(ErrorOf(laughs + "}\n").find("more than 200000 values"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMaxConfigBytes + 1, '#')).find("a config may hold at most"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(200000, '[')).find("YAML syntax error"), std::string::npos);
}

// Issue 15: `timeout: 0s` was accepted; an overflowing one wrapped negative.
TEST(StudyConfig, TimeoutsAndBudgetsMustBePositiveAndFinite) {
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 0s")).find("trial.timeout: must be longer than 0s"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("time_budget: 1h", "time_budget: 0ms")).find("study.time_budget: must be longer"),
            std::string::npos);
  const std::string error = ErrorOf(GoodWith("timeout: 10m", "timeout: 99999999999999999h"));
  EXPECT_NE(error.find("cfg.yaml:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("trial.timeout: '99999999999999999h' is longer than 3650d"), std::string::npos) << error;
}

// Issue 18: study.stop_when ends a sweep that stopped improving or reached its target.
TEST(StudyConfig, StopWhenTakesNoImprovementAndTargetAndRefusesTheRest) {
  Result<StudyConfig> both = LoadConfigText(
      GoodWith("time_budget: 1h", "time_budget: 1h, stop_when: {no_improvement: 50, target: 0.95}"), "cfg.yaml");
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->study.stop_when.no_improvement, 50);
  EXPECT_EQ(both->study.stop_when.target, 0.95);
  Result<StudyConfig> none = LoadConfigText(kGood, "cfg.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->study.stop_when.no_improvement || none->study.stop_when.target);
  Result<StudyConfig> set = LoadConfigText(kGood, "cfg.yaml", {"study.stop_when.target=0.9"});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->study.stop_when.target, 0.9);
  const auto error = [](const std::string& stop_when) {
    return ErrorOf(GoodWith("time_budget: 1h", "time_budget: 1h, stop_when: " + stop_when));
  };
  EXPECT_NE(error("{no_improvement: 0}").find("study.stop_when.no_improvement: must be at least 1"), std::string::npos);
  EXPECT_NE(error("{patience: 5}").find("study.stop_when.patience: unknown key (allowed here: no_improvement, target)"),
            std::string::npos);
  EXPECT_NE(error("{}").find("study.stop_when: give no_improvement"), std::string::npos);
  EXPECT_NE(error("{target: high}").find("study.stop_when.target"), std::string::npos);
  EXPECT_NE(error("{target: .inf}").find("study.stop_when.target"), std::string::npos);
  EXPECT_NE(error("50").find("study.stop_when"), std::string::npos);
}

// Issue 15: `step: 0.3` over [0, 1] silently made the upper bound unreachable.
TEST(StudyConfig, AStepThatDoesNotDivideTheRangeIsRefusedWithTheNearestBounds) {
  const std::string error = ErrorOf(GoodWith("momentum:   {type: float, low: 0.0, high: 0.99",
                                             "momentum:   {type: float, low: 0.0, high: 1.0, step: 0.3"));
  EXPECT_NE(error.find("space.momentum.step: step 0.3 does not divide [0.0, 1.0]: the high end would never be "
                       "sampled; use high 0.9 or 1.2"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf(GoodWith("step: 8}", "step: 5}")).find("space.channels.step: step 5 does not divide"),
            std::string::npos);
  // Steps that divide up to rounding are fine.
  EXPECT_TRUE(LoadConfigText(GoodWith("high: 0.99,", "high: 0.9, step: 0.1,"), "cfg.yaml").ok());
  EXPECT_TRUE(LoadConfigText(GoodWith("low: 0.0, high: 0.99,", "low: 0.1, high: 0.7, step: 0.2,"), "cfg.yaml").ok());
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

const char* kTwoMetrics =
    "study: {name: mo, metrics: [{name: val_accuracy, direction: maximize}, {name: latency_ms, direction: minimize}]}\n"
    "sampler: {kind: nsga2}\ntrial: {command: [prog]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n";

std::string TwoMetricsWith(const std::string& from, const std::string& to) {
  std::string text = kTwoMetrics;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Several metrics under auto (the default): multi-objective TPE for a short study, NSGA-II for a
// long one; the TPE that auto picks models the metrics independently, as a named one does.
TEST(StudyConfig, AutoWithSeveralMetricsPicksTpeThenNsga2) {
  Result<StudyConfig> shorter = LoadConfigText(TwoMetricsWith("sampler: {kind: nsga2}\n", ""), "mo.yaml");
  ASSERT_TRUE(shorter.ok()) << shorter.status().message();
  EXPECT_EQ(shorter->sampler.kind, "tpe");
  EXPECT_FALSE(shorter->sampler.multivariate);
  EXPECT_NE(shorter->sampler.reason.find("auto: 2 metrics"), std::string::npos) << shorter->sampler.reason;
  Result<StudyConfig> longer = LoadConfigText(
      kTwoMetrics, "mo.yaml", {"sampler.kind=auto", "study.n_trials=" + std::to_string(kAutoNsga2MinTrials)});
  ASSERT_TRUE(longer.ok()) << longer.status().message();
  EXPECT_EQ(longer->sampler.kind, "nsga2");
}

// Multi-objective TPE defaults to independent densities (the joint one drifts to a corner of
// DTLZ2's front: bench/README.md); a study that asks for the joint one gets it.
TEST(StudyConfig, SeveralMetricsMakeTpeUnivariateUnlessAsked) {
  Result<StudyConfig> mo = LoadConfigText(TwoMetricsWith("{kind: nsga2}", "{kind: tpe}"), "mo.yaml");
  ASSERT_TRUE(mo.ok()) << mo.status().message();
  EXPECT_FALSE(mo->sampler.multivariate);
  mo = LoadConfigText(TwoMetricsWith("{kind: nsga2}", "{kind: tpe, multivariate: true}"), "mo.yaml");
  ASSERT_TRUE(mo.ok()) << mo.status().message();
  EXPECT_TRUE(mo->sampler.multivariate);
  Result<StudyConfig> one = LoadConfigText(GoodWith("{kind: random, seed: 7}", "{kind: tpe}"), "cfg.yaml");
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_TRUE(one->sampler.multivariate) << "one metric keeps the joint density";
}

TEST(StudyConfig, MetricsListsTheObjectivesInOrder) {
  Result<StudyConfig> config = LoadConfigText(kTwoMetrics, "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->study.metrics.size(), 2u);
  EXPECT_TRUE(config->study.multi_objective());
  EXPECT_EQ(config->study.metrics[0].name, "val_accuracy");
  EXPECT_EQ(config->study.metrics[0].direction, Direction::kMaximize);
  EXPECT_EQ(config->study.metrics[1].direction, Direction::kMinimize);
  // The first metric is also the single-metric view that pruning and progress use.
  EXPECT_EQ(config->study.metric, "val_accuracy");
  EXPECT_EQ(config->study.direction, Direction::kMaximize);
  EXPECT_EQ(config->study.ReportedMetrics(), (std::vector<std::string>{"val_accuracy", "latency_ms"}));
  // The single form is one metric.
  Result<StudyConfig> single = LoadConfigText(kGood, "cfg.yaml");
  ASSERT_TRUE(single.ok());
  EXPECT_FALSE(single->study.multi_objective());
  ASSERT_EQ(single->study.metrics.size(), 1u);
  EXPECT_EQ(single->study.metrics[0].name, "value");
  EXPECT_EQ(single->study.metrics[0].direction, Direction::kMaximize);
}

TEST(StudyConfig, RecordedFiguresCanBeMetricsButNotTheFirst) {
  Result<StudyConfig> config = LoadConfigText(
      TwoMetricsWith("{name: latency_ms, direction: minimize}", "{name: energy_j, direction: minimize}"), "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->study.ReportedMetrics(), (std::vector<std::string>{"val_accuracy"}));
  EXPECT_NE(
      ErrorOf(TwoMetricsWith("{name: val_accuracy, direction: maximize}", "{name: trial_seconds, direction: minimize}"))
          .find("cfg.yaml:1:29: study.metrics[0]: the first metric must be one the trial reports"),
      std::string::npos);
}

TEST(StudyConfig, RecordedFiguresFillAMultiMetricRecord) {
  Result<StudyConfig> config = LoadConfigText(
      TwoMetricsWith("{name: latency_ms, direction: minimize}",
                     "{name: gpu_seconds, direction: minimize}, {name: trial_seconds, direction: minimize}, "
                     "{name: peak_rss_mb, direction: minimize}"),
      "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  TrialRecord r;
  r.state = TrialState::kComplete;
  r.start_time = 100;
  r.end_time = 130;
  r.gpu_seconds = 60;
  r.peak_rss_kb = 2048;
  config->study.FillValues({0.9}, &r);
  EXPECT_EQ(r.values, (std::vector<double>{0.9, 60, 30, 2}));
  // An unknown figure cannot be ranked: the trial fails, saying which.
  TrialRecord unknown = r;
  unknown.gpu_seconds = std::nan("");
  config->study.FillValues({0.9}, &unknown);
  EXPECT_EQ(unknown.state, TrialState::kFail);
  EXPECT_NE(unknown.reason.find("its metric gpu_seconds is unknown"), std::string::npos) << unknown.reason;
}

TEST(StudyConfig, MetricsMistakesAreNamed) {
  EXPECT_NE(ErrorOf(TwoMetricsWith("study: {name: mo,", "study: {name: mo, metric: acc,"))
                .find("study.metrics: give either metrics (a list) or metric and direction (one metric), not both"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith("latency_ms", "val_accuracy")).find("'val_accuracy' is named twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith("latency_ms", "latency-ms")).find("'latency-ms' is not a metric name"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith("direction: minimize", "direction: down")).find("must be minimize or maximize"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith(", direction: minimize}", "}")).find("needs a name and a direction"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith("metrics: [{name: val_accuracy, direction: maximize}, {name: latency_ms, "
                                   "direction: minimize}]",
                                   "metrics: []"))
                .find("study.metrics: must be a list of {name: ..., direction: minimize|maximize}"),
            std::string::npos);
}

TEST(StudyConfig, SingleObjectiveSamplersRefuseSeveralMetricsNamingThoseThatAccept) {
  for (const char* kind : {"cmaes"}) {
    EXPECT_NE(ErrorOf(TwoMetricsWith("kind: nsga2", std::string("kind: ") + kind))
                  .find(std::string("sampler.kind: the ") + kind +
                        " sampler optimises one metric and this study has 2 (study.metrics); samplers for "
                        "several metrics: nsga2, tpe, random, grid, sobol"),
              std::string::npos)
        << kind;
  }
  for (const char* kind : {"random", "sobol", "nsga2", "tpe"}) {
    EXPECT_TRUE(LoadConfigText(TwoMetricsWith("kind: nsga2", std::string("kind: ") + kind), "mo.yaml").ok()) << kind;
  }
  // A target is a single metric's value.
  EXPECT_NE(ErrorOf(TwoMetricsWith("name: mo,", "name: mo, stop_when: {target: 0.9},"))
                .find("study.stop_when.target: applies to a study of one metric; this one has 2"),
            std::string::npos);
}

TEST(StudyConfig, Nsga2TakesItsOwnKeys) {
  Result<StudyConfig> config =
      LoadConfigText(TwoMetricsWith("kind: nsga2",
                                    "kind: nsga2, population_size: 20, crossover_prob: 0.8, swapping_prob: 0.3, "
                                    "mutation_prob: 0.1"),
                     "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->sampler.population_size, 20);
  EXPECT_EQ(config->sampler.crossover_prob, 0.8);
  EXPECT_EQ(config->sampler.swapping_prob, 0.3);
  EXPECT_EQ(config->sampler.mutation_prob, 0.1);
  EXPECT_NE(ErrorOf(TwoMetricsWith("kind: nsga2", "kind: nsga2, crossover_prob: 1.5")).find("must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TwoMetricsWith("kind: nsga2", "kind: random, population_size: 5"))
                .find("does not apply to the random sampler"),
            std::string::npos);
}

TEST(StudyConfig, ConstraintsBoundMetricsAndRecordedFiguresAndMeasureTheViolation) {
  Result<StudyConfig> config =
      LoadConfigText(TwoMetricsWith("direction: minimize}]}",
                                    "direction: minimize}], constraints: {latency_ms: {max: 20}, "
                                    "gpu_mem_peak_mb: {max: 40000}, val_accuracy: {min: 0.5, max: 2}}}"),
                     "mo.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->study.constraints.size(), 3u);
  TrialRecord r;
  r.state = TrialState::kComplete;
  r.value = 0.9;
  r.values = {0.9, 12};
  r.gpu_mem_peak_mb = 1000;
  EXPECT_EQ(config->study.Violation(r), 0) << "inside every bound";
  r.values = {0.9, 25};  // 5 ms over a 20 ms bound: 5 / 20
  EXPECT_DOUBLE_EQ(config->study.Violation(r), 0.25);
  EXPECT_TRUE([&] {
    TrialRecord t = r;
    t.violation = config->study.Violation(t);
    return t.infeasible() && !HasScore(t);
  }()) << "an infeasible trial has no score for the samplers";
  r.values = {0.25, 12};  // 0.25 under a minimum of 0.5: relative to max(1, 0.5)
  EXPECT_DOUBLE_EQ(config->study.Violation(r), 0.25);
  r.values = {0.9, 12};
  r.gpu_mem_peak_mb = std::nan("");  // a figure it lacks (a CPU worker): counted as 1
  EXPECT_DOUBLE_EQ(config->study.Violation(r), 1);
  r.state = TrialState::kFail;
  EXPECT_TRUE(std::isnan(config->study.Violation(r))) << "only COMPLETE trials are judged";
  EXPECT_TRUE(std::isnan(LoadConfigText(kTwoMetrics, "mo.yaml")->study.Violation(r)));
}

TEST(StudyConfig, ConstraintMistakesAreNamed) {
  const auto error = [](const std::string& constraints) {
    return ErrorOf(
        TwoMetricsWith("direction: minimize}]}", "direction: minimize}], constraints: " + constraints + "}"));
  };
  EXPECT_NE(error("{loss: {max: 1}}")
                .find("study.constraints.loss: not a metric of this study (val_accuracy, "
                      "latency_ms) nor a recorded figure (trial_seconds, cpu_seconds"),
            std::string::npos);
  EXPECT_NE(error("{latency_ms: {}}").find("study.constraints.latency_ms: give min, max or both"), std::string::npos);
  EXPECT_NE(error("{latency_ms: {min: 3, max: 2}}").find("study.constraints.latency_ms.min: is above max"),
            std::string::npos);
  EXPECT_NE(error("{latency_ms: {below: 3}}").find("below"), std::string::npos);
  EXPECT_NE(error("{latency_ms: 20}").find("expected a mapping"), std::string::npos);
}

// Issue 16: trial.gpus, a number or a parameter; trial.processes; what cannot go with them.
TEST(StudyConfig, TrialGpusIsANumberOrAParameterThatChoosesItPerTrial) {
  Result<StudyConfig> fixed = LoadConfigText(GoodWith("timeout: 10m", "timeout: 10m, gpus: 4"), "cfg.yaml");
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_EQ(fixed->trial.max_gpus, 4);
  EXPECT_TRUE(fixed->trial.gangs());
  EXPECT_EQ(fixed->trial.processes, GangProcesses::kPerGpu);
  EXPECT_EQ(fixed->trial.GpusFor({}), 4);
  Result<StudyConfig> chosen =
      LoadConfigText(GoodWith("timeout: 10m", "timeout: 10m, gpus: \"{g}\", processes: single") +
                         "  g: {type: categorical, choices: [1, 2, 8]}\n",
                     "cfg.yaml");
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ(chosen->trial.max_gpus, 8);
  EXPECT_EQ(chosen->trial.processes, GangProcesses::kSingle);
  EXPECT_EQ(chosen->trial.GpusFor({{"g", std::int64_t{2}}}), 2);
  Result<StudyConfig> plain = LoadConfigText(kGood, "cfg.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->trial.gangs());

  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: 0")).find("trial.gpus: expected a number of GPUs"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: \"{nope}\"")).find("names no parameter of the space"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: \"{lr}\"")).find("parameter 'lr' cannot choose"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: \"{momentum}\"")).find("not conditional"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: 2, processes: two")).find("expected per_gpu"),
            std::string::npos);
  EXPECT_NE(ErrorOf(GoodWith("timeout: 10m", "timeout: 10m, gpus: 2") + "workers: {queue: 1}\n")
                .find("workers.queue: must be 0 or auto when trials take several GPUs"),
            std::string::npos);
}

}  // namespace
}  // namespace cleansweep
