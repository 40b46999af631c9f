// `cleansweep run`: rank 0 becomes the coordinator, every other rank a worker.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/study_setup.hpp"
#include "coordinator/coordinator.hpp"
#include "gpu/gpu_probe.hpp"
#include "launch/fork_server_launcher.hpp"
#include "launch/spawn_launcher.hpp"
#include "launch/trial_command.hpp"
#include "report/report.hpp"
#include "study/siblings.hpp"
#include "study/study_file.hpp"
#include "transport/mpi_job.hpp"
#include "util/output_file.hpp"
#include "util/quantile.hpp"
#include "worker/gpu_binding.hpp"
#include "worker/worker.hpp"

namespace cleansweep {
namespace {

// The name of this rank's node, as the coordinator groups workers into nodes (gangs, GPU lines).
// CLEANSWEEP_NODE_NAME replaces it: for containers whose nodes all share one host name, and for
// tests that place ranks of one machine on simulated nodes (docs/multi-gpu.md).
std::string HostName() {
  if (const char* name = std::getenv("CLEANSWEEP_NODE_NAME"); name && *name) return name;
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Whether the person who started the sweep watches a terminal. Under mpirun, rank 0's stdout is
// a pty that mpirun forwards whatever its own stdout is, so we look at mpirun's (our parent's).
bool WatchedOnTerminal() {
  if (::isatty(STDOUT_FILENO) != 1) return false;
  if (!std::getenv("OMPI_COMM_WORLD_RANK")) return true;
  std::error_code ec;
  const std::string target =
      std::filesystem::read_symlink("/proc/" + std::to_string(::getppid()) + "/fd/1", ec).string();
  return !ec && (target.rfind("/dev/pts/", 0) == 0 || target.rfind("/dev/tty", 0) == 0);
}

// Stop requests from signals, for every rank: SIGTERM, SIGINT, SIGHUP and SIGUSR1 (what Slurm
// sends before a time limit) ask for a graceful stop; a second SIGTERM, SIGINT or SIGHUP for an
// immediate one. srun forwards them to every task; mpirun forwards SIGUSR1 (SIGTERM and SIGINT make
// Open MPI kill the job itself: docs/reliability.md).
volatile std::sig_atomic_t g_stop_level = 0;
volatile std::sig_atomic_t g_stop_signal = 0;

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = [](int sig) {
    if (g_stop_level == 0) {
      g_stop_level = 1;
      g_stop_signal = sig;
    } else if (sig != SIGUSR1) {
      g_stop_level = 2;
    }
  };
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) ::sigaction(sig, &action, nullptr);
}

StopRequest PollStopRequest() {
  StopRequest request;
  request.level = g_stop_level;
  if (request.level > 0) {
    const int sig = g_stop_signal;
    request.reason = std::string(sig == SIGUSR1  ? "SIGUSR1"
                                 : sig == SIGINT ? "SIGINT"
                                 : sig == SIGHUP ? "SIGHUP"
                                                 : "SIGTERM") +
                     " received";
  }
  return request;
}

// With CLEANSWEEP_COORDINATOR_PID_FILE set (scripts/slurm/launch.sh sets it), rank 0 writes its
// pid there for the job's life, so a batch script can signal the coordinator alone: srun passes
// a signal to every process of the job, trials included (docs/slurm.md).
class CoordinatorPidFile {
 public:
  CoordinatorPidFile() {
    const char* path = std::getenv("CLEANSWEEP_COORDINATOR_PID_FILE");
    if (!path || !*path) return;
    path_ = path;
    const std::string partial = path_ + ".partial";
    if (std::FILE* f = std::fopen(partial.c_str(), "w")) {
      std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
      const bool written = std::fclose(f) == 0;
      std::error_code ec;
      if (written) std::filesystem::rename(partial, path_, ec);
    }
  }
  ~CoordinatorPidFile() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove(path_, ec);
  }
  CoordinatorPidFile(const CoordinatorPidFile&) = delete;
  CoordinatorPidFile& operator=(const CoordinatorPidFile&) = delete;

 private:
  std::string path_;
};

// Where `run --join` notes the shard it took, and `run --join --resume` looks for it.
constexpr const char* kJoinRecordVariable = "CLEANSWEEP_JOIN_RECORD";

// run --join --resume (a requeued joiner): the shard CLEANSWEEP_JOIN_RECORD names ("joined-7"),
// or "" when the file does not exist yet (the job stopped before it joined: it joins now).
Result<std::string> RecordedJoin() {
  const char* record = std::getenv(kJoinRecordVariable);
  if (!record || !*record) {
    return Status::InvalidInput(
        "--join --resume continues the shard this job joined before, which CLEANSWEEP_JOIN_RECORD names (join.sbatch "
        "sets it); it is not set. Continue a joined shard with: cleansweep resume ITS_FILE");
  }
  std::ifstream in(record);
  if (!in) return std::string();
  std::string name;
  std::getline(in, name);
  Result<Shard> shard = ParseShard(name);
  if (!shard.ok() || !shard->joined) {
    return Status::InvalidInput(std::string(record) + " (" + kJoinRecordVariable + "): holds \"" + name +
                                "\", not a joined shard (joined-K); remove it to join anew");
  }
  return name;
}

// run --join: the next free shard index of the sweep CONFIG names, claimed with an exclusive
// create of its study file (of two joiners that race, one gets the next index), as the
// `study.shard=joined-K` setting; `*claimed` is the file, which the caller removes if the run
// fails before it is written.
Result<std::string> ClaimJoinedShard(const RunArgs& args, std::string* claimed) {
  if (!args.shard.empty() || args.from_study) {
    return Status::InvalidInput(
        "--join takes the next free shard index itself: give it without --shard (a joined shard that stopped is "
        "continued with: cleansweep resume ITS_FILE)");
  }
  Result<StudyConfig> config = LoadConfigFile(args.config, args.sets);
  if (!config.ok()) return config.status();
  if (config->study.shard.part()) {
    return Status::InvalidInput(args.config + ": --join: the config sets study.shard; take it out to join");
  }
  const std::string sweep = SweepStoragePath(config->study.storage);
  for (int tries = 0; tries < 1000; ++tries) {
    Shard shard;
    shard.joined = true;
    shard.index = NextJoinIndex(sweep);
    const std::string path = ShardStoragePath(sweep, shard);
    Result<bool> won = ClaimStudyFile(path);
    if (!won.ok()) return won.status();
    if (*won) {
      *claimed = path;
      if (const char* record = std::getenv(kJoinRecordVariable); record && *record) {
        // For a requeued job (join.sbatch): run --join --resume continues this shard.
        if (Status written = WriteFileAtomically(record, shard.Name() + "\n"); !written.ok()) {
          return written.WithContext(std::string(kJoinRecordVariable) + " (where a requeued job finds its shard)");
        }
      }
      return "study.shard=" + shard.Name();
    }
  }
  return Status::RuntimeError(sweep +
                              ": --join could not claim a shard index after 1000 tries; are that many "
                              "joining at once?");
}

int RunCoordinator(const RunArgs& args, MpiJob* job) {
  Transport* transport = job->transport();
  const CoordinatorPidFile pid_file;
  StudyMode mode = args.from_study ? StudyMode::kResume : args.resume ? StudyMode::kNewOrResume : StudyMode::kNew;
  std::vector<std::string> sets = args.sets;
  if (!args.shard.empty()) sets.push_back("study.shard=" + args.shard);
  // A joined shard's claim on its index, removed again if its study file was never written.
  struct Claim {
    std::string path;
    ~Claim() {
      std::error_code ec;
      if (!path.empty() && std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0) {
        std::filesystem::remove(path, ec);
      }
    }
  } claim;
  Result<PreparedStudy> prepared = Status::InvalidInput("");
  Result<std::string> recorded = std::string();
  if (args.join && args.resume) recorded = RecordedJoin();
  if (!recorded.ok()) {
    prepared = recorded.status();
  } else if (args.join && !recorded->empty()) {  // a requeued joiner: its own shard again
    sets.push_back("study.shard=" + *recorded);
    prepared = PrepareStudy(args.config, sets, mode, args.force);
  } else if (args.join) {
    if (args.resume) mode = StudyMode::kNew;  // it had not joined yet: it joins now
    Result<std::string> joined = ClaimJoinedShard(args, &claim.path);
    if (joined.ok()) sets.push_back(*joined);
    prepared = joined.ok() ? PrepareStudy(args.config, sets, mode, args.force) : Result<PreparedStudy>(joined.status());
  } else {
    prepared = PrepareStudy(args.config, sets, mode, args.force);
  }
  if (!prepared.ok()) {
    for (int rank = 1; rank < transport->size(); ++rank) {
      // The config error is the message; a worker we cannot reach ends with mpirun anyway.
      CS_IGNORE_ERROR(transport->Send(rank, StopMsg{"invalid config"}));
    }
    return PrintError(prepared.status());
  }
  const StudyConfig& config = prepared->config;
  const SystemClock clock;
  const bool live = args.progress == "live" || (args.progress == "auto" && WatchedOnTerminal());
  Progress progress(stdout, live, config);
  // Sharing with the sweep's other files (shards, joined shards): not for population-based training,
  // whose population lives in one job.
  std::unique_ptr<SiblingReader> siblings;
  if (config.study.share_every.count() > 0 && config.sampler.kind != "pbt") {
    siblings = std::make_unique<SiblingReader>(config);
  }
  const bool shared_budget = siblings && !ShardsPartitionSweep(config.sampler.kind);
  const std::string shard =
      !config.study.shard.part() ? ""
      : shared_budget
          ? " (shard " + config.study.shard.Name() + ", sharing the sweep's " + std::to_string(config.study.n_trials) +
                " with its other files every " + FormatDuration(config.study.share_every) + ")"
          : " (shard " + config.study.shard.Name() + " of a sweep of " + std::to_string(config.study.n_trials) + ")";
  const std::int64_t planned =
      shared_budget ? config.study.n_trials : ShardSize(config.study.shard, config.study.n_trials);
  progress.Message("study " + config.study.name + ": " + std::to_string(planned) + " trials" + shard + " on " +
                   std::to_string(transport->size() - 1) + " workers, " + config.sampler.kind + " sampler" +
                   (config.sampler.reason.empty() ? "" : " (" + config.sampler.reason + ")") + ", " +
                   (prepared->prior ? "continuing " : "writing ") + config.study.storage);
  Coordinator coordinator(config, transport, prepared->sampler.get(), &clock, &progress);
  coordinator.Share(siblings.get());
  std::map<std::string, std::string> notes;  // root attributes of a new study file
  for (const WarmStartFile& file : prepared->warm_start) {
    progress.Message("warm start: " + file.Summary());
    notes["warm_start"] += file.Summary() + "\n";
  }
  coordinator.WarmStart(prepared->warm_start);
  ReportInput report_base;  // the rows so far, for a report rewritten during the run
  if (config.study.report_every && prepared->prior) report_base = ReportInputFrom(*prepared->prior);
  if (prepared->prior) coordinator.Resume(std::move(prepared->prior->trials), prepared->prior->intermediate);
  coordinator.SetStopPoll(PollStopRequest);
  const bool resuming = prepared->prior.has_value();
  if (config.study.report_every) {
    progress.Message("report: " + DefaultReportPath(config.study.storage) + ", rewritten every " +
                     FormatDuration(*config.study.report_every) + " (open it in a browser; it reloads itself)");
  }
  Result<RunSummary> summary = coordinator.Run(
      [&]() -> Result<std::unique_ptr<StudyStore>> {
        Result<std::unique_ptr<StudyFile>> file = resuming ? StudyFile::Reopen(config.study.storage, config)
                                                           : StudyFile::Create(config.study.storage, config, notes);
        if (!file.ok()) return file.status();
        if (!resuming) {  // trial folders of a study whose file is gone belong to no trial of this one
          Result<std::string> moved = MoveAsideStaleTrialFolders(TrialsRoot(config.study));
          if (!moved.ok()) return moved.status();
          if (!moved->empty()) {
            progress.Message("notice: " + TrialsRoot(config.study) +
                             " held the trial folders of an earlier study whose file is gone; moved to " + *moved);
          }
        }
        if (!config.study.report_every) return std::unique_ptr<StudyStore>(std::move(*file));
        ReportInput base = std::move(report_base);
        base.config = config;
        base.path = config.study.storage;
        base.seed = static_cast<long long>(config.sampler.seed);
        return std::unique_ptr<StudyStore>(std::make_unique<ReportingStore>(
            std::move(*file), std::move(base), DefaultReportPath(config.study.storage), *config.study.report_every));
      },
      TrialsRoot(config.study));
  if (!summary.ok()) {
    const int exit_code = PrintError(summary.status());
    // A failed run kills its running trials and hears every worker's last result before it
    // returns, so the job ends in order. A worker that did not answer may be blocked sending a
    // result nobody will receive, and MPI_Finalize would wait for it for ever: only aborting the
    // job ends it then.
    if (!coordinator.WorkersSettled()) job->Abort(exit_code);
    return exit_code;
  }
  if (summary->best) {
    std::printf("best: trial %lld, %s = %.6g\n", static_cast<long long>(summary->best->number),
                config.study.metric.c_str(), *summary->best->value);
  } else if (!summary->pareto_front.empty()) {
    std::printf("Pareto front: %zu trials; see them with: cleansweep show %s\n", summary->pareto_front.size(),
                config.study.storage.c_str());
  } else {
    std::printf("no trial completed; see the reasons with: cleansweep show %s\n", config.study.storage.c_str());
  }
  if (!summary->stopped_early.empty()) std::printf("stopped early: %s\n", summary->stopped_early.c_str());
  if (summary->sweep_trials >= 0 && siblings && !siblings->files().empty()) {
    std::vector<double> ms = summary->share_ms;
    std::sort(ms.begin(), ms.end());
    std::printf("sweep: %lld trials known across %zu study files; %zu reads of the other files, median %.1f ms\n",
                static_cast<long long>(summary->sweep_trials), siblings->files().size() + 1, ms.size(),
                ms.empty() ? 0.0 : NearestRankQuantile(ms, 0.5));
  }
  std::printf("study file: %s\n", config.study.storage.c_str());
  if (std::vector<double> ms = summary->commit_ms; !ms.empty()) {
    std::sort(ms.begin(), ms.end());
    std::printf("commits: %lld trial rows made durable in %zu group commits, median %.2f ms, p99 %.2f ms each\n",
                static_cast<long long>(summary->committed_rows), ms.size(), NearestRankQuantile(ms, 0.5),
                NearestRankQuantile(ms, 0.99));
  }
  if (std::vector<double> ms = summary->suggest_ms; !ms.empty()) {
    std::sort(ms.begin(), ms.end());
    std::printf(
        "suggest: %zu requests for a parameter answered by rank 0 (drawn, recorded, flushed), median %.2f ms, "
        "p99 %.2f ms each\n",
        ms.size(), NearestRankQuantile(ms, 0.5), NearestRankQuantile(ms, 0.99));
  }
  if (!summary->worker_fault.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "cleansweep: error: %s\nthe sweep stopped; trials it could not start are INTERRUPTED and run "
                 "again: fix the cause, then continue with: cleansweep resume %s\n",
                 summary->worker_fault.c_str(), config.study.storage.c_str());
    return kExitFailure;
  }
  if (summary->interrupted) {
    std::printf("stopped before the end (%lld of %lld trials); continue with: cleansweep resume %s\n",
                static_cast<long long>(summary->finished),
                static_cast<long long>(ShardSize(config.study.shard, config.study.n_trials)),
                config.study.storage.c_str());
    std::fflush(stdout);
    return kExitInterrupted;
  }
  return kExitOk;
}

int RunWorker(Transport* transport, WorkerIdentity identity) {
  ::signal(SIGPIPE, SIG_IGN);  // a trial that closed its control pipe must not kill its worker
  // No trial outlives its worker: orphaned descendants come back to us and are killed when their
  // trial ends, and the guard kills running trials' groups if we are killed.
  ChildRegistry children;  // outlives the launchers below, which start children into it
  Status guarded = children.AdoptOrphans();
  identity.isolation = children.UseCgroups();
  if (guarded.ok()) guarded = children.StartGuard();
  if (!guarded.ok()) return PrintError(guarded.WithContext("worker rank " + std::to_string(transport->rank())));
  std::string no_nvml;
  const std::unique_ptr<GpuProbe> nvml = LoadNvml(&no_nvml);  // null without an NVIDIA driver
  identity.no_gpu_telemetry = no_nvml;
  SpawnLauncher launcher(&children);
  Worker worker(transport, &launcher, identity);
  worker.SetGpuProbe(nvml.get());
  worker.SetLauncherFactory(
      [&children](const StudyConfig& config, const std::string& plugin) -> Result<std::unique_ptr<Launcher>> {
        if (config.trial.launcher != LauncherKind::kForkServer) return std::unique_ptr<Launcher>();
        Result<std::string> server = FindForkServer();
        if (!server.ok()) return server.status();
        auto fork_server = std::make_unique<ForkServerLauncher>(
            &children, *server, plugin, config.trial.prepare_timeout, SystemClock::Get(), config.trial.prefork);
        CS_RETURN_IF_ERROR(fork_server->StartServer());  // a plugin that cannot load fails the setup, once
        return std::unique_ptr<Launcher>(std::move(fork_server));
      });
  worker.SetSignalPoll([] { return static_cast<int>(g_stop_level); });
  const Status status = worker.Run();
  children.ReleaseCgroups();
  if (!status.ok()) {
    return PrintError(status.WithContext("worker rank " + std::to_string(transport->rank()) + " on " + identity.host));
  }
  return kExitOk;
}

}  // namespace

int RunCommand(const RunArgs& args, int* argc, char*** argv) {
  InstallStopHandlers();  // before MPI starts threads, so they inherit nothing else
  Result<std::unique_ptr<MpiJob>> job = MpiJob::Start(argc, argv);
  if (!job.ok()) return PrintError(job.status());
  MpiJob& mpi = **job;
  if (mpi.size() < 2) {
    return PrintError(Status::InvalidInput(
        "cleansweep run needs at least 2 MPI ranks: rank 0 coordinates and every other rank runs trials.\n"
        "  start it as:  mpirun -np 3 cleansweep run " +
        args.config +
        "   (1 coordinator + 2 workers)\n"
        "  on Slurm:     srun --ntasks=<1 + number of GPUs> cleansweep run " +
        args.config));
  }
  WorkerIdentity identity;
  identity.host = HostName();
  const MpiJob::NodePlace place = mpi.WorkersOnThisNode();
  if (mpi.rank() != 0) {
    identity.local_count = place.count;
    identity.local_index = WorkerIndexOnNode(ProcessEnvironment(), place.index, place.count, place.coordinator_here);
  }
  identity.visible_gpus = DetectVisibleGpus(ProcessEnvironment());
  identity.cpu_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return mpi.rank() == 0 ? RunCoordinator(args, &mpi) : RunWorker(mpi.transport(), identity);
}

}  // namespace cleansweep
