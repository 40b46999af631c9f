// cleansweep: parses the command line and dispatches to one subcommand.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "study/study_file.hpp"
#include "util/allocator.hpp"
#include "util/version.hpp"

int main(int argc, char** argv) {
  using namespace cleansweep;
  KeepHdf5OpenAtExit();
  KeepFreedMemoryMapped();  // rank 0's sampler
  CLI::App app{"cleansweep: hyperparameter search where every trial runs in a fresh process"};
  app.set_version_flag("--version", std::string("cleansweep ") + kVersion);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  mpirun -np 3 cleansweep run configs/quickstart.yaml     1 coordinator + 2 workers on this machine\n"
      "  cleansweep show results/fashion-quick.h5               what a study holds\n"
      "  cleansweep SUBCOMMAND --help                           each subcommand, with an example\n"
      "Docs: README.md and docs/ (architecture, study-format, slurm, reliability, samplers, pruners)");

  RunArgs run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a study (start with mpirun/srun: rank 0 coordinates, the others run trials)");
  run_cmd->footer(
      "Examples:\n"
      "  mpirun -np 3 cleansweep run configs/quickstart.yaml --set study.n_trials=20\n"
      "  mpirun -np 3 cleansweep run configs/quickstart.yaml --resume      continue after a stop or crash\n"
      "  mpirun -np 2 cleansweep run sweep.yaml --shard 0/4                 shard 0 of 4; then cleansweep merge\n"
      "On Slurm: sbatch scripts/slurm/sweep.sbatch CONFIG (docs/slurm.md)");
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
  run_cmd->add_flag("--join", run.join,
                    "Start a new shard of the sweep (running or finished) under the next free index; it learns "
                    "from the others' study files and shares their n_trials (docs/slurm.md); with --resume, "
                    "continues the shard CLEANSWEEP_JOIN_RECORD names (a requeued join.sbatch job)");

  RunArgs resume;
  resume.from_study = true;
  CLI::App* resume_cmd = app.add_subcommand(
      "resume",
      "Continue a stopped or killed study from its file, with the config stored in it (start with mpirun/srun)");
  resume_cmd->add_option("study", resume.config, "HDF5 study file")->required();
  resume_cmd->footer(
      "Example:\n"
      "  mpirun -np 3 cleansweep resume results/fashion-quick.h5 --set study.n_trials=40");
  resume_cmd->add_option("--set", resume.sets, "Override a stored config value, e.g. --set study.n_trials=200");
  resume_cmd->add_flag("--force", resume.force, "Continue although --set changed the search space or objective");
  resume_cmd
      ->add_option("--progress", resume.progress,
                   "live: redraw one status line; lines: one line per finished trial; auto: live on a terminal")
      ->check(CLI::IsMember({"auto", "live", "lines"}));

  ValidateArgs validate;
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check a config and print the resolved search space");
  validate_cmd->add_option("config", validate.config, "YAML config file")->required();
  validate_cmd->footer("Example:\n  cleansweep validate configs/quickstart.yaml --set sampler.kind=tpe");
  validate_cmd->add_option("--set", validate.sets, "Override a config value, e.g. --set study.n_trials=8");

  ShowArgs show;
  CLI::App* show_cmd = app.add_subcommand(
      "show", "Summarise a study file: counts by state, the latest failures and why, best trial, top trials");
  show_cmd->add_option("study", show.study, "HDF5 study file")->required();
  show_cmd->footer("Example:\n  cleansweep show results/fashion-quick.h5 --top 5       (also while the sweep runs)");
  show_cmd->add_option("--top", show.top, "How many trials to list")->check(CLI::NonNegativeNumber);

  ExportArgs exp;
  CLI::App* export_cmd = app.add_subcommand("export", "Write a study's trials as CSV or JSON");
  export_cmd->add_option("study", exp.study, "HDF5 study file")->required();
  export_cmd->footer("Example:\n  cleansweep export results/fashion-quick.h5 --format csv -o trials.csv");
  export_cmd->add_option("--format", exp.format, "csv or json")->check(CLI::IsMember({"csv", "json"}));
  export_cmd->add_option("-o,--output", exp.output, "Output file (default: stdout)");

  ReportArgs report;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "Write a study as one self-contained HTML page with plots (opens offline in any browser)");
  report_cmd->add_option("study", report.study, "HDF5 study file")->required();
  report_cmd->add_option("-o,--output", report.output, "The HTML file to write (default: the study's name with .html)");
  report_cmd->footer(
      "Example:\n"
      "  cleansweep report results/fashion-quick.h5 -o report.html      (also while the sweep runs)\n"
      "During a run, study.report_every: 30s in the config rewrites results/NAME.html every 30 s");

  MergeArgs merge;
  CLI::App* merge_cmd =
      app.add_subcommand("merge", "Join the study files of a sharded sweep (run --shard K/N) into one study file");
  merge_cmd->add_option("output", merge.output, "The merged study file to write (must not exist)")->required();
  merge_cmd->footer(
      "Example:\n"
      "  cleansweep merge results/sweep.h5 results/sweep-shard-*-of-4.h5\n"
      "On Slurm, scripts/slurm/submit-array.sh submits the shards and this merge (docs/slurm.md)");
  merge_cmd->add_option("shards", merge.shards, "The shards' study files")->required();
  merge_cmd->add_flag("--allow-missing", merge.allow_missing, "Merge although some shards' files are not given");

  CleanArgs clean;
  CLI::App* clean_cmd = app.add_subcommand(
      "clean", "Remove the checkpoints of a study's trials that have ended for good (not while a sweep runs on it)");
  clean_cmd->add_option("study", clean.study, "HDF5 study file")->required();
  clean_cmd->footer(
      "Example:\n"
      "  cleansweep clean results/fashion-quick.h5\n"
      "Interrupted trials keep theirs: they go on from them on resume (docs/checkpoints.md)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (run_cmd->parsed()) return RunCommand(run, &argc, &argv);
  if (resume_cmd->parsed()) return RunCommand(resume, &argc, &argv);
  int code = kExitOk;
  if (validate_cmd->parsed()) {
    code = ValidateCommand(validate);
  } else if (show_cmd->parsed()) {
    code = ShowCommand(show);
  } else if (merge_cmd->parsed()) {
    code = MergeCommand(merge);
  } else if (report_cmd->parsed()) {
    code = ReportCommand(report);
  } else if (clean_cmd->parsed()) {
    code = CleanCommand(clean);
  } else {
    code = ExportCommand(exp);
  }
  return CheckStandardOutput(code);
}
