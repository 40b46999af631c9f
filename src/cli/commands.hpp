// One function per subcommand; each returns the process exit status (docs/architecture.md lists
// them: 0 done, 1 runtime failure, 2 bad input, 3 stopped early by a signal, resumable). main.cpp
// only parses and dispatches.
#pragma once

#include <string>
#include <vector>

#include "util/status.hpp"

namespace cleansweep {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 3;  // stopped by SIGTERM/SIGINT/SIGUSR1; `cleansweep resume` continues

struct RunArgs {
  std::string config;       // a YAML config, or for `resume` the study file
  bool resume = false;      // run --resume: continue the study file if it exists
  bool from_study = false;  // resume STUDY
  bool force = false;       // continue although the search space changed
  std::vector<std::string> sets;
  std::string progress = "auto";  // live | lines | auto (live when watched on a terminal)
  std::string shard;              // run --shard K/N: this run's part of a sharded sweep
  bool join = false;              // run --join: a new shard of the sweep, under the next free index
};
struct ValidateArgs {
  std::string config;
  std::vector<std::string> sets;
};
struct ShowArgs {
  std::string study;
  int top = 10;
};
struct ReportArgs {
  std::string study;
  std::string output;  // "" means the study's path with .html
};
struct MergeArgs {
  std::string output;
  std::vector<std::string> shards;
  bool allow_missing = false;
};
struct CleanArgs {
  std::string study;
};
struct ExportArgs {
  std::string study;
  std::string format = "csv";
  std::string output;  // "" or "-" means stdout
};

int RunCommand(const RunArgs& args, int* argc, char*** argv);
int ValidateCommand(const ValidateArgs& args);
int ShowCommand(const ShowArgs& args);
int ExportCommand(const ExportArgs& args);
int MergeCommand(const MergeArgs& args);
int ReportCommand(const ReportArgs& args);
int CleanCommand(const CleanArgs& args);

// Prints "cleansweep: error: <message>" to stderr and returns the exit status for `status`.
int PrintError(const Status& status);

// A command's exit status, once what it printed has reached standard output: `show > /dev/full`,
// or onto a full disk, fails with status 1 and says so, instead of exiting 0 with the output lost.
int CheckStandardOutput(int code);

}  // namespace cleansweep
