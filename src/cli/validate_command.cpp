#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/study_setup.hpp"

namespace cleansweep {

int PrintError(const Status& status) {
  std::fprintf(stderr, "cleansweep: error: %s\n", status.message().c_str());
  return status.code() == Status::Code::kInvalidInput ? kExitBadInput : kExitFailure;
}

int CheckStandardOutput(int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  // A command that failed has said why already.
  if (code != kExitOk || (flushed && !std::ferror(stdout) && !std::cout.fail())) return code;
  std::fprintf(stderr, "cleansweep: error: writing to standard output failed%s%s; what was printed is incomplete\n",
               error ? ": " : "", error ? std::strerror(error) : "");
  return kExitFailure;
}

int ValidateCommand(const ValidateArgs& args) {
  Result<PreparedStudy> prepared = PrepareStudy(args.config, args.sets, StudyMode::kCheck, false);
  if (!prepared.ok()) return PrintError(prepared.status());
  const StudyConfig& c = prepared->config;
  std::printf("%s: valid\n", args.config.c_str());
  std::printf("study     %s: %s, %lld trials", c.study.name.c_str(), c.study.DescribeMetrics().c_str(),
              static_cast<long long>(c.study.n_trials));
  if (c.study.time_budget) std::printf(", time budget %s", FormatDuration(*c.study.time_budget).c_str());
  const bool model_based = !ShardsPartitionSweep(c.sampler.kind) && c.sampler.kind != "pbt";
  if (c.study.shard.sharded() && !(model_based && c.study.share_every.count() > 0)) {
    std::printf("\nshard     %s: %lld of the %lld trials", c.study.shard.Name().c_str(),
                static_cast<long long>(ShardSize(c.study.shard, c.study.n_trials)),
                static_cast<long long>(c.study.n_trials));
  } else if (c.study.shard.part()) {
    std::printf("\nshard     %s: shares the sweep's %lld trials with its other files", c.study.shard.Name().c_str(),
                static_cast<long long>(c.study.n_trials));
  }
  if (c.sampler.kind == "pbt" || c.study.share_every.count() == 0) {
    std::printf("\nsharing   none: %s",
                c.sampler.kind == "pbt" ? "population-based training runs in one job" : "study.share_every is 0");
  } else {
    std::printf("\nsharing   reads the sweep's other study files every %s%s",
                FormatDuration(c.study.share_every).c_str(),
                model_based ? " (their trials are history, pending trials and part of n_trials)"
                            : " (for stop_when; random, grid and sobol shards keep their exact part of the list)");
  }
  for (const WarmStartFile& file : prepared->warm_start) std::printf("\nwarm start %s", file.Summary().c_str());
  std::error_code ec;
  std::printf("\nstorage   %s%s\n", c.study.storage.c_str(),
              std::filesystem::exists(c.study.storage, ec) ? " (exists: run --resume continues it)" : "");
  std::printf("trials in %s/<number>/\n", TrialsRoot(c.study).c_str());
  std::printf("sampler   %s (seed %llu)", c.sampler.kind.c_str(), static_cast<unsigned long long>(c.sampler.seed));
  if (!c.sampler.reason.empty()) std::printf(", chosen by %s", c.sampler.reason.c_str());
  if (const auto capacity = prepared->sampler->Capacity())
    std::printf(", %lld grid points", static_cast<long long>(*capacity));
  const SamplerOptions& s = c.sampler;
  if (s.kind == "tpe") {
    std::printf(", %d start-up trials, %d candidates, gamma %g (at most %d), %s, %s", s.n_startup_trials,
                s.n_ei_candidates, s.gamma, s.gamma_max, s.multivariate ? "multivariate" : "univariate",
                s.constant_liar ? "constant liar" : "no constant liar");
  } else if (s.kind == "cmaes") {
    std::printf(", sigma0 %g, population %s", s.sigma0, s.popsize > 0 ? std::to_string(s.popsize).c_str() : "auto");
  }
  // Figures only a GPU worker with NVML can measure: the workers check when the sweep starts.
  for (const Metric& m : c.study.metrics) {
    if (m.name != "energy_j" && m.name != "gpu_mem_peak_mb") continue;
    std::printf(
        "\nmeasured  %s by each worker through NVML (docs/gpu.md): a worker that cannot (a CPU worker, no "
        "NVML%s) refuses the study before any trial runs, exit 2",
        m.name.c_str(), m.name == "energy_j" ? ", a GPU without an energy counter" : "");
  }
  if (!c.enqueue.empty()) std::printf("\nenqueue   %zu configurations run first", c.enqueue.size());
  std::printf("\ntrial     %s", prepared->program.c_str());
  for (size_t i = 1; i < c.trial.command.size(); ++i) std::printf(" %s", c.trial.command[i].c_str());
  std::printf("\n          timeout %s, kill grace %s, log limit %lld MiB\n",
              c.trial.timeout ? FormatDuration(*c.trial.timeout).c_str() : "none",
              FormatDuration(c.trial.kill_grace).c_str(), static_cast<long long>(c.trial.log_limit_bytes >> 20));
  if (c.space.params().empty()) {
    std::printf(
        "space     defined by the trial: it asks for each parameter as it runs (trial.suggest_*; "
        "docs/trial-protocol.md), and the %s sampler draws it from the trials that had it\n",
        c.sampler.kind.c_str());
  } else {
    std::printf("space     %zu parameters%s\n%s", c.space.params().size(),
                "; the trial may define more as it runs (docs/trial-protocol.md)", c.space.Describe().c_str());
  }
  return kExitOk;
}

}  // namespace cleansweep
