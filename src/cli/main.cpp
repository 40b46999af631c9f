// cleansweep: parses the command line and dispatches to one subcommand.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "util/version.hpp"

int main(int argc, char** argv) {
  using namespace cleansweep;
  CLI::App app{"cleansweep: hyperparameter search where every trial runs in a fresh process"};
  app.set_version_flag("--version", std::string("cleansweep ") + kVersion);
  app.require_subcommand(1);

  RunArgs run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a study (start with mpirun/srun: rank 0 coordinates, the others run trials)");
  run_cmd->add_option("config", run.config, "YAML config file")->required();
  run_cmd->add_option("--set", run.sets, "Override a config value, e.g. --set study.n_trials=8");
  run_cmd
      ->add_option("--progress", run.progress,
                   "live: redraw one status line; lines: one line per finished trial; auto: live on a terminal")
      ->check(CLI::IsMember({"auto", "live", "lines"}));

  run_cmd->add_flag("--resume", run.resume,
                    "Continue the study file if it exists (finished trials kept, interrupted ones run again)");
  run_cmd->add_flag("--force", run.force, "With --resume: continue although the search space or objective changed");
  run_cmd->add_option("--shard", run.shard,
                      "Run shard K of N (K from 0) of the sweep, into its own study file; join the shards "
                      "with cleansweep merge (docs/slurm.md)");

  RunArgs resume;
  resume.from_study = true;
  CLI::App* resume_cmd = app.add_subcommand(
      "resume",
      "Continue a stopped or killed study from its file, with the config stored in it (start with mpirun/srun)");
  resume_cmd->add_option("study", resume.config, "HDF5 study file")->required();
  resume_cmd->add_option("--set", resume.sets, "Override a stored config value, e.g. --set study.n_trials=200");
  resume_cmd->add_flag("--force", resume.force, "Continue although --set changed the search space or objective");
  resume_cmd
      ->add_option("--progress", resume.progress,
                   "live: redraw one status line; lines: one line per finished trial; auto: live on a terminal")
      ->check(CLI::IsMember({"auto", "live", "lines"}));

  ValidateArgs validate;
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check a config and print the resolved search space");
  validate_cmd->add_option("config", validate.config, "YAML config file")->required();
  validate_cmd->add_option("--set", validate.sets, "Override a config value, e.g. --set study.n_trials=8");

  ShowArgs show;
  CLI::App* show_cmd = app.add_subcommand("show", "Summarise a study file: counts by state, best trial, top trials");
  show_cmd->add_option("study", show.study, "HDF5 study file")->required();
  show_cmd->add_option("--top", show.top, "How many trials to list")->check(CLI::NonNegativeNumber);

  ExportArgs exp;
  CLI::App* export_cmd = app.add_subcommand("export", "Write a study's trials as CSV or JSON");
  export_cmd->add_option("study", exp.study, "HDF5 study file")->required();
  export_cmd->add_option("--format", exp.format, "csv or json")->check(CLI::IsMember({"csv", "json"}));
  export_cmd->add_option("-o,--output", exp.output, "Output file (default: stdout)");

  MergeArgs merge;
  CLI::App* merge_cmd =
      app.add_subcommand("merge", "Join the study files of a sharded sweep (run --shard K/N) into one study file");
  merge_cmd->add_option("output", merge.output, "The merged study file to write (must not exist)")->required();
  merge_cmd->add_option("shards", merge.shards, "The shards' study files")->required();
  merge_cmd->add_flag("--allow-missing", merge.allow_missing, "Merge although some shards' files are not given");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (run_cmd->parsed()) return RunCommand(run, &argc, &argv);
  if (resume_cmd->parsed()) return RunCommand(resume, &argc, &argv);
  if (validate_cmd->parsed()) return ValidateCommand(validate);
  if (show_cmd->parsed()) return ShowCommand(show);
  if (merge_cmd->parsed()) return MergeCommand(merge);
  return ExportCommand(exp);
}
