// Per-trial launch overhead through the launchers a worker uses: the time from asking for a trial
// to its first report, and to its exit (reaped, classified), for a trial that does no work. The
// trainer's --startup-only mode loads libtorch, makes one tensor, reports and exits.
// `preforked` is the fork server with trial.prefork: each trial begins as a standby child forked
// while the one before it ran.
//   launch_bench --launcher spawn|forkserver|preforked --program PATH [--trials 30] [--args ...]
// Prints one line per trial: launcher, trial, ms to the first report, ms to the exit.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "launch/fork_server_launcher.hpp"
#include "launch/spawn_launcher.hpp"
#include "launch/trial_command.hpp"

namespace cleansweep {
namespace {

int Main(int argc, char** argv) {
  std::string kind = "spawn", program;
  int trials = 30;
  std::vector<std::string> args;
  CLI::App app{"Per-trial launch overhead of one launcher"};
  app.add_option("--launcher", kind)->check(CLI::IsMember({"spawn", "forkserver", "preforked"}));
  app.add_option("--program", program, "the trial program (spawn) or plugin (forkserver, preforked)")->required();
  app.add_option("--trials", trials)->check(CLI::PositiveNumber);
  app.add_option("--args", args, "arguments after the program")->allow_extra_args();
  CLI11_PARSE(app, argc, argv);

  // As a worker does: orphans come back to us, the guard, a cgroup per trial where possible.
  ChildRegistry children;
  if (!children.AdoptOrphans().ok() || !children.StartGuard().ok()) return 1;
  const std::string isolation = children.UseCgroups();
  std::unique_ptr<Launcher> launcher;
  if (kind == "spawn") {
    launcher = std::make_unique<SpawnLauncher>(&children);
  } else {
    Result<std::string> server = FindForkServer();
    if (!server.ok()) {
      std::fprintf(stderr, "%s\n", server.status().message().c_str());
      return 1;
    }
    auto fork_server = std::make_unique<ForkServerLauncher>(&children, *server, program, Millis(300'000),
                                                            SystemClock::Get(), kind == "preforked");
    const auto start = std::chrono::steady_clock::now();
    if (Status s = fork_server->StartServer(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    std::printf("# fork server ready (plugin loaded) in %.0f ms, paid once per worker\n",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    launcher = std::move(fork_server);
  }
  std::printf("# %s, isolation: %s\n", kind.c_str(), isolation.c_str());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cs-launch-bench-" + std::to_string(::getpid()));
  std::printf("launcher\ttrial\tfirst_report_ms\texit_ms\n");
  int failures = 0;
  for (int i = 0; i < trials; ++i) {
    LaunchSpec spec;
    spec.argv = {program};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.trial_dir = (dir / std::to_string(i)).string();
    spec.env = {{"CLEANSWEEP_PARAMS", "{}"},
                {"CLEANSWEEP_TRIAL", std::to_string(i)},
                {"CLEANSWEEP_TRIAL_DIR", spec.trial_dir},
                {"CLEANSWEEP_REPORT_FD", "3"},
                {"CLEANSWEEP_CONTROL_FD", "4"},
                {"OMP_NUM_THREADS", "1"}};
    const auto start = std::chrono::steady_clock::now();
    Result<std::unique_ptr<TrialProcess>> trial = launcher->Start(spec);
    if (!trial.ok()) {
      std::fprintf(stderr, "%s\n", trial.status().message().c_str());
      return 1;
    }
    double first_ms = -1;
    std::vector<StepValue> steps;
    while (!(*trial)->Finished()) {
      (*trial)->Poll(Millis(1000), &steps);
      if (first_ms < 0 && !steps.empty()) {
        first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
    }
    const double exit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if ((*trial)->Outcome().state != TrialState::kComplete) {
      std::fprintf(stderr, "trial %d: %s\n%s\n", i, (*trial)->Outcome().reason.c_str(),
                   (*trial)->Outcome().output_tail.c_str());
      ++failures;
    }
    std::printf("%s\t%d\t%.3f\t%.3f\n", kind.c_str(), i, first_ms, exit_ms);
    std::fflush(stdout);
  }
  launcher.reset();
  children.ReleaseCgroups();
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cleansweep

int main(int argc, char** argv) { return cleansweep::Main(argc, argv); }
