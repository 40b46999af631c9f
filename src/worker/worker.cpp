#include "worker/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "launch/checkpoints.hpp"
#include "launch/output_capture.hpp"
#include "launch/spawn_launcher.hpp"
#include "launch/trial_command.hpp"
#include "space/trial_defined.hpp"
#include "util/utf8.hpp"
#include "worker/gpu_binding.hpp"

namespace cleansweep {
namespace {

constexpr Millis kIdleWait(1000);
constexpr Millis kTrialPoll(100);  // how often a busy worker looks for a stop message
constexpr Millis kGpuSample(250);  // how often it reads the GPU memory of a running trial
// After a stop signal, how long a worker waits for the coordinator's word before acting alone.
constexpr Millis kSilentCoordinator(10'000);
// How long after a trial died of a stop signal the same signal may still be on its way to us.
constexpr Millis kStopSignalLag(500);
// How long a trial whose control pipe was found closed by an answer may still exit on its own
// (it died with its request in flight) before it is failed for it.
constexpr Millis kClosedControlGrace(2000);

// The stop signal (SIGTERM, SIGINT, SIGHUP, SIGUSR1) that ended a trial, or null: the signal that
// killed it, or one a shell reported as exit status 128 + signal.
const char* StopSignalOf(const TrialOutcome& o) {
  for (const auto& [sig, name] : {std::pair{SIGTERM, "SIGTERM"}, std::pair{SIGINT, "SIGINT"},
                                  std::pair{SIGHUP, "SIGHUP"}, std::pair{SIGUSR1, "SIGUSR1"}}) {
    if (o.signal == sig || o.exit_code == 128 + sig) return name;
  }
  return nullptr;
}

// The devices a CUDA_VISIBLE_DEVICES value lists; none for "" (the CPU).
std::vector<std::string> Devices(const std::string& visible) {
  std::vector<std::string> devices;
  std::stringstream list(visible);
  for (std::string device; std::getline(list, device, ',');) devices.push_back(device);
  return devices;
}

}  // namespace

Worker::Worker(Transport* transport, Launcher* launcher, WorkerIdentity identity)
    : transport_(transport), launcher_(launcher), identity_(std::move(identity)) {}

Result<Message> Worker::Await(const char* what) {
  std::optional<std::chrono::steady_clock::time_point> signalled;
  while (true) {
    Result<std::optional<Envelope>> got = transport_->Receive(kIdleWait);
    if (!got.ok()) return got.status().WithContext(std::string("waiting for ") + what);
    if (got->has_value()) return std::move((*got)->message);
    const int level = signal_poll_ ? signal_poll_() : 0;
    if (level == 0) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!signalled) signalled = now;
    if (level >= 2 || now - *signalled > kSilentCoordinator) {
      return Message(StopMsg{"stop signal, and no word from the coordinator", 0, true});
    }
  }
}

Status Worker::SetUp(const SetupMsg& setup) {
  ReadyMsg ready;
  Result<StudyConfig> config = LoadConfigText(setup.config_yaml, "config from rank 0");
  const bool plugin = config.ok() && config->trial.launcher == LauncherKind::kForkServer;
  Result<std::string> program =
      config.ok() ? ResolveTrialProgram(config->trial.command[0], plugin) : Result<std::string>(config.status());
  if (program.ok() && launcher_factory_) {
    Result<std::unique_ptr<Launcher>> made = launcher_factory_(*config, *program);
    if (!made.ok()) {
      program = made.status();
    } else if (*made) {
      own_launcher_ = std::move(*made);
      launcher_ = own_launcher_.get();
    }
  }
  if (program.ok() && !config->trial.objective.empty()) {
    Result<std::string> helper = FindPythonHelper();
    if (helper.ok())
      python_helper_ = *helper;
    else
      program = helper.status();
  }
  if (program.ok()) {
    config_ = std::move(*config);
    program_ = *program;
    trials_root_ = setup.trials_root;
    const GpuAssignment assignment =
        AssignGpu(config_->workers.gpus, identity_.visible_gpus, identity_.local_index, identity_.local_count);
    gpu_ = assignment.device;
    ready.ok = true;
    ready.gpu = gpu_;
    ready.gpu_source =
        config_->workers.gpus == "auto" ? identity_.visible_gpus.source : "workers.gpus=" + config_->workers.gpus;
    ready.gpu_note = assignment.note;
    if (config_->trial.distributed) {  // this worker may lead a gang: the address and port its rank 0 listens on
      Result<RendezvousPort> port = RendezvousPort::Reserve();
      if (port.ok()) {
        ready.port = port->port();
        port_ = std::move(*port);
        ready.address = identity_.address.empty() ? ReachableAddress() : identity_.address;
      } else {
        ready.ok = false;
        ready.error = port.status().message();
      }
    }
    ready.isolation = identity_.isolation;
    if (plugin) ready.isolation += "; trials forked by a fork server from " + program_;
    if (!gpu_.empty()) {
      ready.isolation += gpu_probe_ ? "; GPU memory recorded through NVML"
                                    : "; GPU memory not recorded: " + identity_.no_gpu_telemetry;
    }
    // A metric this worker cannot measure would fail every trial: refuse it before any runs.
    for (const Metric& m : config_->study.metrics) {
      const bool energy = m.name == "energy_j", memory = m.name == "gpu_mem_peak_mb";
      if (!energy && !memory) continue;
      const std::string why = gpu_.empty()  ? "its trials get no GPU (a CPU worker)"
                              : !gpu_probe_ ? "NVML is not available: " + identity_.no_gpu_telemetry
                              : energy && !GpuEnergy(Devices(gpu_))
                                  ? "its GPU " + gpu_ + " does not count energy (NVIDIA's count it from Volta on)"
                                  : "";
      if (why.empty()) continue;
      ready.ok = false;
      ready.error = "study.metrics names " + m.name + ", which this worker cannot measure: " + why +
                    "; take it out of study.metrics (a constraint on it counts an unknown value as a violation)";
      break;
    }
  } else {
    ready.error = program.status().message();
  }
  return transport_->Send(0, ready);
}

LaunchSpec Worker::SpecFor(const AssignMsg& assign) const {
  const TrialOptions& options = config_->trial;
  LaunchSpec spec;
  spec.trial_dir = trials_root_ + "/" + std::to_string(assign.number);
  const GangPlace& gang = assign.gang;
  if (gang.rank > 0) {  // rank 0 speaks for the trial; its log is log.txt
    spec.log_name = "log.rank-" + std::to_string(gang.rank) + ".txt";
    spec.value_required = false;
  }
  spec.argv = ExpandCommand(options.command, assign.params, assign.number, spec.trial_dir);
  spec.argv[0] = program_;
  spec.timeout = options.timeout;
  spec.kill_grace = options.kill_grace;
  spec.log_limit_bytes = options.log_limit_bytes;
  spec.tail_lines = options.tail_lines;
  spec.memory_limit_bytes = options.memory_limit_bytes;
  spec.metrics = config_->study.ReportedMetrics();
  spec.env["CLEANSWEEP_PARAMS"] = ToJson(assign.params).dump();
  spec.env["CLEANSWEEP_TRIAL"] = std::to_string(assign.number);
  spec.env["CLEANSWEEP_ATTEMPT"] = std::to_string(assign.attempt);
  spec.env["CLEANSWEEP_TRIAL_DIR"] = spec.trial_dir;
  spec.env["CLEANSWEEP_CHECKPOINT_DIR"] = CheckpointDir(spec.trial_dir);
  spec.env["CLEANSWEEP_RESUME_STEP"] = assign.resume_step >= 0 ? std::to_string(assign.resume_step) : "";
  spec.env["CLEANSWEEP_REPORT_FD"] = std::to_string(SpawnLauncher::kReportFd);
  spec.env["CLEANSWEEP_CONTROL_FD"] = std::to_string(SpawnLauncher::kControlFd);
  spec.env["CLEANSWEEP_METRICS"] = nlohmann::json(spec.metrics).dump();  // what an objective's return values are
  if (!options.objective.empty()) {                                      // python3 -m cleansweep_trial finds the helper
    const char* before = std::getenv("PYTHONPATH");
    spec.env["PYTHONPATH"] = python_helper_ + (before && *before ? ":" + std::string(before) : "");
  }
  // Whether a notice can come on it at all: a trial need not wait for a verdict that never comes.
  spec.env["CLEANSWEEP_PRUNING"] = config_->sampler.kind == "pbt" || config_->pruner.kind != "none" ? "1" : "0";
  // One device, or none: a trial never sees a GPU that belongs to another worker.
  if (!gpu_.empty() || config_->workers.gpus == "none" || !identity_.visible_gpus.devices.empty()) {
    spec.env["CUDA_VISIBLE_DEVICES"] = gpu_;
  }
  // Number devices as NVML does (by PCI bus), so the index a trial gets names the device whose
  // memory the worker reads; CUDA's default order (fastest first) may differ. The user's choice wins.
  if (!gpu_.empty() && !std::getenv("CUDA_DEVICE_ORDER")) spec.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  const int slots = gang.single ? gang.size : 1;  // the workers this process stands for
  if (!std::getenv("OMP_NUM_THREADS")) {          // share the node's cores instead of oversubscribing them
    spec.env["OMP_NUM_THREADS"] =
        std::to_string(std::max(1, identity_.cpu_count * slots / std::max(1, identity_.local_count)));
  }
  // docs/multi-gpu.md: what torch.distributed's env:// and torchrun read; with trial.gpus set, a
  // trial of size 1 gets it too (its worker's port), as torchrun gives it to one process.
  if (gang.size > 1 || gang.master_port > 0) {
    spec.env["CLEANSWEEP_GPUS"] = std::to_string(gang.size);
    spec.env["MASTER_ADDR"] = gang.master_addr;
    spec.env["MASTER_PORT"] = std::to_string(gang.master_port);
    if (gang.single) {
      if (spec.env.count("CUDA_VISIBLE_DEVICES") && !gpu_.empty()) spec.env["CUDA_VISIBLE_DEVICES"] = gang.gpus;
    } else {
      spec.env["RANK"] = std::to_string(gang.rank);
      spec.env["WORLD_SIZE"] = std::to_string(gang.size);
      spec.env["LOCAL_RANK"] = std::to_string(gang.local_rank);
      spec.env["LOCAL_WORLD_SIZE"] = std::to_string(gang.local_size);
      spec.env["GROUP_RANK"] = std::to_string(gang.group_rank);
      spec.env["GROUP_WORLD_SIZE"] = std::to_string(gang.groups);
    }
  }
  for (const auto& [name, value] : options.env) spec.env[name] = value;
  return spec;
}

bool Worker::GpuIsClean(const std::string& gpus, TrialRecord* record) {
  const std::vector<std::string> devices = Devices(gpus);
  if (!gpu_probe_ || devices.empty()) return true;
  const auto deadline = std::chrono::steady_clock::now() + config_->trial.gpu_clean_wait;
  std::string leftover;  // "pid (MiB)" of earlier trials' processes still on the devices
  double leftover_mb = 0;
  for (;;) {
    leftover.clear();
    leftover_mb = 0;
    double foreign_mb = 0;
    std::string foreign;
    bool known = false;  // some device could tell its processes
    for (const std::string& device : devices) {
      const std::optional<std::vector<GpuProcess>> processes = gpu_probe_->Processes(device);
      if (!processes) continue;  // the driver cannot tell: nothing to check there
      known = true;
      for (const GpuProcess& p : *processes) {
        const double mb = std::max(0.0, p.used_mb);
        const bool ours = earlier_gpu_pids_.count(p.pid) > 0;
        std::string& list = ours ? leftover : foreign;
        list += (list.empty() ? "" : ", ") + std::to_string(p.pid) + " (" + std::to_string(std::lround(mb)) + " MiB)";
        (ours ? leftover_mb : foreign_mb) += mb;
      }
    }
    if (!known) break;
    if (leftover.empty() || std::chrono::steady_clock::now() >= deadline) {
      record->gpu_mem_foreign_mb = foreign_mb;
      if (!foreign.empty()) {
        std::fprintf(stderr,
                     "cleansweep: warning: rank %d on %s: GPU %s: processes not started by cleansweep hold memory "
                     "there: %s\n",
                     transport_->rank(), identity_.host.c_str(), gpus.c_str(), ForTerminal(foreign).c_str());
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!leftover.empty()) {
    record->state = TrialState::kFail;
    record->reason = "not started: GPU " + gpus + " is not clean: processes of earlier trials still hold " +
                     std::to_string(std::lround(leftover_mb)) + " MiB there after trial.gpu_clean_wait (" +
                     FormatDuration(config_->trial.gpu_clean_wait) + "): " + leftover;
    std::fprintf(stderr, "cleansweep: warning: rank %d on %s: trial %s\n", transport_->rank(), identity_.host.c_str(),
                 ForTerminal(record->reason).c_str());  // process names are the trials' to choose
    return false;
  }
  if (const std::optional<double> used = GpuUsedMb(devices)) record->gpu_mem_before_mb = *used;
  return true;
}

std::optional<double> Worker::GpuUsedMb(const std::vector<std::string>& devices) const {
  double used = 0;
  for (const std::string& device : devices) {
    const std::optional<GpuMemory> memory = gpu_probe_->DeviceMemory(device);
    if (!memory) return std::nullopt;
    used += memory->used_mb;
  }
  return used;
}

void Worker::SampleGpu(const std::vector<std::string>& devices, int process_group, TrialRecord* record,
                       double* device_peak) {
  if (const std::optional<double> used = GpuUsedMb(devices)) *device_peak = std::max(*device_peak, *used);
  double mine = 0;
  bool known = false;
  for (const std::string& device : devices) {
    const std::optional<std::vector<GpuProcess>> processes = gpu_probe_->Processes(device);
    if (!processes) continue;
    known = true;
    for (const GpuProcess& p : *processes) {
      if (process_group > 0 && ::getpgid(p.pid) == process_group) {
        mine += std::max(0.0, p.used_mb);
        earlier_gpu_pids_.insert(p.pid);
      }
    }
  }
  if (!known) return;
  record->gpu_mem_peak_mb = std::isnan(record->gpu_mem_peak_mb) ? mine : std::max(record->gpu_mem_peak_mb, mine);
}

std::optional<double> Worker::GpuEnergy(const std::vector<std::string>& devices) const {
  double joules = 0;
  for (const std::string& device : devices) {
    const std::optional<double> counter = gpu_probe_->EnergyJoules(device);
    if (!counter) return std::nullopt;
    joules += *counter;
  }
  return joules;
}

Status Worker::RunTrial(const AssignMsg& assign) {
  TrialRecord record;
  std::vector<double> reported_values;
  // With `processes: single` the one process uses every GPU of the gang (all on this node).
  const std::string& gpus = assign.gang.single && !gpu_.empty() && !assign.gang.gpus.empty() ? assign.gang.gpus : gpu_;
  const std::vector<std::string> devices = Devices(gpus);
  if (!GpuIsClean(gpus, &record)) {  // recorded FAIL with the reason; the trial never starts
    record.start_time = record.end_time = clock_->Now();
    return SendResult(assign, std::move(record));
  }
  const bool telemetry = gpu_probe_ && !devices.empty();
  const std::optional<double> energy_before = telemetry ? GpuEnergy(devices) : std::nullopt;
  const LaunchSpec spec = SpecFor(assign);
  if (assign.parent >= 0 && assign.resume_step >= 0) {
    // Population-based training: the trial starts from another trial's checkpoint, put in its own folder.
    const std::optional<std::string> error =
        ShareCheckpoint(CheckpointDir(trials_root_ + "/" + std::to_string(assign.parent)),
                        CheckpointDir(spec.trial_dir), assign.resume_step);
    if (error) {
      record.state = TrialState::kFail;
      record.reason =
          "not started: cannot start from the checkpoint of trial " + std::to_string(assign.parent) + ": " + *error;
      record.start_time = record.end_time = clock_->Now();
      return SendResult(assign, std::move(record));
    }
  } else if (assign.resume_step >= 0) {
    // The trial goes on in its folder: the log (and a gang rank's reports) of the attempt before
    // stay beside the new ones.
    const std::string before = ".attempt-" + std::to_string(assign.attempt - 1);
    const std::string stem = spec.log_name.substr(0, spec.log_name.size() - 4);  // "log", "log.rank-1"
    std::error_code ec;
    std::filesystem::rename(spec.trial_dir + "/" + spec.log_name, spec.trial_dir + "/" + stem + before + ".txt", ec);
    if (assign.gang.rank > 0) {
      const std::string reports = "reports.rank-" + std::to_string(assign.gang.rank);
      std::filesystem::rename(spec.trial_dir + "/" + reports + ".jsonl",
                              spec.trial_dir + "/" + reports + before + ".jsonl", ec);
    }
  }
  Result<std::unique_ptr<TrialProcess>> started = launcher_->Start(spec);
  double device_peak = std::isnan(record.gpu_mem_before_mb) ? 0 : record.gpu_mem_before_mb;
  auto next_sample = std::chrono::steady_clock::now();
  if (started.ok()) {
    TrialProcess& trial = **started;
    std::vector<StepValue> steps;
    using SteadyClock = std::chrono::steady_clock;
    std::optional<SteadyClock::time_point> stop_at;    // the coordinator's grace for this trial ends
    std::optional<SteadyClock::time_point> signalled;  // we got a stop signal ourselves
    std::string stop_reason;
    std::optional<SteadyClock::time_point> abort_at;  // another process of the gang failed: ours stops then
    std::string abort_reason;
    // Only a gang's rank 0 speaks for the trial; the others' reports are kept beside their logs.
    const bool leads = assign.gang.rank == 0;
    UniqueFd others;
    if (!leads) {
      // Made with CreateTrialFile: the trial runs already, and may have put a pipe or a link there.
      const std::string name = "reports.rank-" + std::to_string(assign.gang.rank) + ".jsonl";
      Result<UniqueFd> created =
          CreateTrialFile(spec.trial_dir + "/" + name, "rank " + std::to_string(assign.gang.rank) + "'s reports");
      if (created.ok()) {
        others = std::move(*created);
      } else {
        std::fprintf(stderr, "cleansweep: warning: rank %d on %s: trial %lld: %s; they are not kept\n",
                     transport_->rank(), identity_.host.c_str(), static_cast<long long>(assign.number),
                     created.status().message().c_str());
      }
    }
    // Define-by-run (docs/trial-protocol.md): what the trial was told, by name, and the request
    // rank 0 is answering (one at a time).
    std::map<std::string, std::pair<ParamSpec, std::string>> answered;
    std::optional<ParamSpec> asking;
    std::optional<SteadyClock::time_point> closed_at;  // an answer found the control pipe closed: fail then
    std::string closed_reason;
    const auto answer = [&](const ParamSpec& asked, const std::string& value_json, const std::string& error) {
      nlohmann::json line = {{"name", asked.name}};
      if (error.empty()) {
        line["value"] = nlohmann::json::parse(value_json, nullptr, false);
        answered[asked.name] = {asked, value_json};
      } else {
        line["error"] = error;
      }
      const TrialProcess::Delivery delivery = trial.Answer(line.dump());
      if (!error.empty()) {
        trial.Stop(TrialState::kFail, "protocol error: " + error);
      } else if (delivery == TrialProcess::Delivery::kFull) {
        trial.Stop(TrialState::kFail, "protocol error: the answer to the request for '" + asked.name +
                                          "' could not be written to the trial's control pipe: it is full of answers "
                                          "the trial never read (CLEANSWEEP_CONTROL_FD)");
      } else if (delivery == TrialProcess::Delivery::kClosed && !closed_at) {
        // Most often the trial died with its request in flight: its exit, seen in a moment, says
        // how it ended. One that lives on without its control pipe waits for nothing and fails.
        closed_at = SteadyClock::now() + kClosedControlGrace;
        closed_reason =
            "protocol error: the trial closed its control pipe (CLEANSWEEP_CONTROL_FD) with its "
            "request for '" +
            asked.name + "' unanswered";
      }
    };
    const auto ask = [&](const ParamSpec& asked) -> Status {
      if (const auto known = answered.find(asked.name); known != answered.end()) {
        if (SameDistribution(known->second.first, asked)) {
          answer(asked, known->second.second, "");
        } else {
          answer(asked, "",
                 "the trial asked for '" + asked.name + "' as " + DescribeDistribution(asked) + ", and before as " +
                     DescribeDistribution(known->second.first) + ": one name, one distribution per trial");
        }
        return Status::Ok();
      }
      if (const ParamSpec* declared = config_->space.Find(asked.name)) {
        std::string value_json;
        const std::optional<std::string> error = AnswerDeclared(assign, *declared, asked, &value_json);
        answer(asked, value_json, error.value_or(""));
        return Status::Ok();
      }
      if (asking) {
        answer(asked, "",
               "the trial asked for '" + asked.name + "' before the answer for '" + asking->name +
                   "' came: one request at a time (read each answer on CLEANSWEEP_CONTROL_FD first)");
        return Status::Ok();
      }
      asking = asked;
      return transport_->Send(0, SuggestMsg{assign.number, asked.name, DistributionJson(asked)});
    };
    while (!trial.Finished()) {
      trial.Poll(asking ? Millis(0) : kTrialPoll, &steps);
      if (telemetry && std::chrono::steady_clock::now() >= next_sample) {
        SampleGpu(devices, trial.ProcessGroup(), &record, &device_peak);
        next_sample = std::chrono::steady_clock::now() + kGpuSample;
      }
      for (const StepValue& s : steps) {
        if (s.suggest) {
          CS_RETURN_IF_ERROR(ask(*s.suggest));
          continue;
        }
        if (!leads) {
          const std::string line =
              (s.checkpoint ? nlohmann::json{{"step", s.step}, {"checkpoint", true}}
                            : nlohmann::json{{"step", s.step}, {"value", s.value}, {"values", s.values}})
                  .dump() +
              "\n";
          if (others.valid() && !WriteAll(others.get(), line.data(), line.size())) others.Reset();  // a full disk: stop
          continue;
        }
        if (s.checkpoint) {  // older checkpoints go when rank 0 says the study file names this one
          CS_RETURN_IF_ERROR(transport_->Send(0, CheckpointMsg{assign.number, s.step}));
          continue;
        }
        const double now = clock_->Now();
        CS_RETURN_IF_ERROR(transport_->Send(0, StepMsg{{assign.number, s.step, s.value, now, s.values}}));
      }
      steps.clear();
      const auto now = SteadyClock::now();
      if (closed_at && now >= *closed_at) {
        trial.Stop(TrialState::kFail, closed_reason);
        closed_at.reset();
      }
      if (abort_at && now >= *abort_at) {
        trial.Stop(TrialState::kInterrupted, "interrupted: " + abort_reason);
        abort_at.reset();
      }
      if (stop_at && now >= *stop_at) {
        trial.Stop(TrialState::kInterrupted, "interrupted: " + stop_reason + " (it did not finish within " +
                                                 FormatDuration(config_->trial.stop_grace) + ", trial.stop_grace)");
        stop_at.reset();
      }
      if (const int level = signal_poll_ ? signal_poll_() : 0; level > 0) {
        if (!signalled) signalled = now;
        if (level >= 2) {
          trial.Kill(TrialState::kInterrupted, "interrupted: stopped at once by a second stop signal");
        } else if (now - *signalled > config_->trial.stop_grace + config_->trial.kill_grace + kSilentCoordinator) {
          trial.Stop(TrialState::kInterrupted, "interrupted: stop signal, and no word from the coordinator");
        }
      }
      // While rank 0 answers a request the trial waits: look for the answer often, not every kTrialPoll.
      transport_->SetResponsive(asking.has_value());
      Result<std::optional<Envelope>> got = transport_->Receive(asking ? Millis(2) : Millis(0));
      if (!got.ok()) return got.status();
      if (!got->has_value()) continue;
      if (const auto* reply = std::get_if<SuggestReplyMsg>(&(*got)->message)) {
        if (asking && reply->number == assign.number && reply->name == asking->name) {
          const ParamSpec asked = std::move(*asking);
          asking.reset();
          answer(asked, reply->value_json, reply->error);
        }  // else the answer to a trial that ended meanwhile: nobody waits for it
      } else if (const auto* next = std::get_if<AssignMsg>(&(*got)->message)) {
        queue_.push_back(*next);  // runs when this one has ended
      } else if (const auto* stop = std::get_if<StopMsg>(&(*got)->message)) {
        stop_ = true;
        stop_reason = stop_reason_ = stop->reason;
        if (stop->immediate) {
          trial.Kill(TrialState::kInterrupted, "interrupted: " + stop->reason + " (stopped at once)");
        } else if (stop->grace_ms <= 0) {
          trial.Stop(TrialState::kInterrupted, "interrupted: " + stop->reason);
        } else if (!stop_at) {
          stop_at = now + Millis(stop->grace_ms);
        }
      } else if (const auto* prune = std::get_if<PruneMsg>(&(*got)->message); prune && prune->number == assign.number) {
        trial.RequestPrune(prune->reason, config_->trial.prune_grace);
      } else if (const auto* release = std::get_if<ReleaseMsg>(&(*got)->message)) {
        Release(*release);  // this trial's, or one that ended before it
      } else if (const auto* abort = std::get_if<AbortMsg>(&(*got)->message);
                 abort && abort->number == assign.number && !abort_at) {
        abort_reason = abort->reason;
        abort_at = now + Millis(abort->grace_ms);
      }
    }
    transport_->SetResponsive(false);  // a trial that ended while it waited for an answer
    const TrialOutcome& o = trial.Outcome();
    record.state = o.state;
    record.value = o.value;
    record.start_time = o.start_time;
    record.end_time = o.end_time;
    record.exit_code = o.exit_code;
    record.signal = o.signal;
    record.peak_rss_kb = o.peak_rss_kb;
    record.cpu_seconds = o.cpu_seconds;
    record.last_step = o.last_step;
    record.checkpoint_step = std::max(o.checkpoint_step, assign.resume_step);
    record.reason = o.reason;
    record.output_tail = o.output_tail;
    record.attrs_json = o.attrs_json;
    reported_values = o.values;
    if (telemetry) {
      if (const std::optional<double> used = GpuUsedMb(devices)) record.gpu_mem_after_mb = *used;
      const std::optional<double> energy_after = energy_before ? GpuEnergy(devices) : std::nullopt;
      if (energy_after) record.energy_j = std::max(0.0, *energy_after - *energy_before);
      // No process of the trial was seen holding memory (a container whose pids NVML does not
      // share): the device's own rise while it ran is the best estimate left.
      if (!(record.gpu_mem_peak_mb > 0) && !std::isnan(record.gpu_mem_before_mb) &&
          device_peak > record.gpu_mem_before_mb) {
        record.gpu_mem_peak_mb = device_peak - record.gpu_mem_before_mb;
      }
    }
    // A batch system stops a job by signalling every process in it, trials included (Slurm's
    // scancel, requeue and preemption do). A trial that died of the stop signal this worker also
    // got did not fail: it was cut off, and runs again when the study resumes. The processes are
    // signalled one after the other, so ours may come a moment after the trial's.
    const bool cut_off = (record.state == TrialState::kCrash || record.state == TrialState::kFail) && StopSignalOf(o);
    for (auto wait = kStopSignalLag; cut_off && signal_poll_ && signal_poll_() == 0 && wait.count() > 0;
         wait -= Millis(10)) {
      std::this_thread::sleep_for(Millis(10));
    }
    if (cut_off && signal_poll_ && signal_poll_() > 0) {
      record.state = TrialState::kInterrupted;
      record.reason = "interrupted: the job was sent " + std::string(StopSignalOf(o)) +
                      ", which reached the trial too (the batch system signals every process of a job)";
    }
  } else {
    // Not the trial's doing, and the next trial would meet it too: the sweep stops (not a stream
    // of FAILs), the trial runs again when the study resumes.
    record.state = TrialState::kInterrupted;
    record.reason = "not started: " + started.status().message();
    record.start_time = record.end_time = clock_->Now();
    return SendResult(assign, std::move(record), started.status().message());
  }
  return SendResult(assign, std::move(record), "", reported_values);
}

std::optional<std::string> Worker::AnswerDeclared(const AssignMsg& assign, const ParamSpec& declared,
                                                  const ParamSpec& asked, std::string* value_json) const {
  const std::string where = declared.line > 0 ? " (line " + std::to_string(declared.line) + ")" : "";
  const auto value = assign.params.find(asked.name);
  if (declared.kind == ParamKind::kFixed) {  // the config pins what the trial would search over
    const Result<ParamValue> fits = SearchSpace::Normalize(asked, declared.fixed_value);
    if (!fits.ok()) {
      return "the trial asked for '" + asked.name + "' as " + DescribeDistribution(asked) + ", and the config fixes " +
             "it at " + FormatValue(declared.fixed_value) + where + ", which that does not hold";
    }
    *value_json = ToJson(*fits).dump();
    return std::nullopt;
  }
  if (!SameDistribution(declared, asked)) {
    return "the trial asked for '" + asked.name + "' as " + DescribeDistribution(asked) + ", and the config's " +
           "space: declares it as " + DescribeDistribution(declared) + where +
           ": make them agree (or leave it out of space: and let the trial define it)";
  }
  if (value == assign.params.end()) {
    return "the trial asked for '" + asked.name + "', which the config's space: declares with when:" + where +
           " and is inactive in this trial";
  }
  *value_json = ToJson(value->second).dump();
  return std::nullopt;
}

void Worker::Release(const ReleaseMsg& release) const {
  const std::string dir = CheckpointDir(trials_root_ + "/" + std::to_string(release.number));
  std::string error;
  RemoveCheckpointsBefore(dir, release.before, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "cleansweep: warning: rank %d on %s: %s\n", transport_->rank(), identity_.host.c_str(),
                 error.c_str());
  }
}

void Worker::Identify(const AssignMsg& assign, TrialRecord* record) const {
  record->number = assign.number;
  record->params = assign.params;
  record->attempt = assign.attempt;
  record->worker = transport_->rank();
  record->host = identity_.host;
  record->gpu = gpu_;
}

Status Worker::SendResult(const AssignMsg& assign, TrialRecord record, std::string worker_fault,
                          const std::vector<double>& reported_values) {
  Identify(assign, &record);
  // Both ends of the gap are this worker's own stamps: the end of its last trial, this one's start.
  if (last_trial_end_) record.worker_free_time = *last_trial_end_;
  // One process: its peaks are the trial's largest (rank 0 sums a gang's processes).
  record.peak_rss_max_kb = record.peak_rss_kb;
  record.gpu_mem_peak_max_mb = record.gpu_mem_peak_mb;
  if (assign.gang.single) {  // the one process of a gang had all its GPUs
    record.gpu = assign.gang.gpus;
    record.gpus = assign.gang.size;
  }
  record.gpu_seconds = std::max(0.0, record.duration()) * static_cast<double>(Devices(record.gpu).size());
  config_->study.FillValues(reported_values, &record);
  last_trial_end_ = record.end_time;
  cannot_start_ = cannot_start_ || !worker_fault.empty();
  return transport_->Send(0, ResultMsg{std::move(record), std::move(worker_fault)});
}

Status Worker::ReportQueuedNotStarted() {
  for (; !queue_.empty(); queue_.pop_front()) {
    TrialRecord record;
    record.state = TrialState::kInterrupted;
    record.reason = "interrupted: not started: " + stop_reason_ + " (it was queued on this worker; it runs on resume)";
    record.start_time = record.end_time = clock_->Now();
    Identify(queue_.front(), &record);  // not SendResult: it never ran, so it has no idle gap before it
    CS_RETURN_IF_ERROR(transport_->Send(0, ResultMsg{std::move(record), ""}));
  }
  return Status::Ok();
}

Status Worker::Run() {
  CS_RETURN_IF_ERROR(transport_->Send(0, HelloMsg{identity_.host}));
  while (!stop_) {
    // The next trial was handed out before this worker was free: it starts at once, no round
    // trip to rank 0. Not after a stop signal, nor once this worker found it cannot start trials:
    // the coordinator's word on it comes first.
    if (!queue_.empty() && !Signalled() && !cannot_start_) {
      const AssignMsg next = std::move(queue_.front());
      queue_.pop_front();
      CS_RETURN_IF_ERROR(RunTrial(next));
      continue;
    }
    Result<Message> message = Await("the coordinator");
    if (!message.ok()) return message.status();
    if (const auto* setup = std::get_if<SetupMsg>(&*message)) {
      CS_RETURN_IF_ERROR(SetUp(*setup));
    } else if (const auto* assign = std::get_if<AssignMsg>(&*message)) {
      if (!config_) return Status::RuntimeError("got a trial before the config");
      queue_.push_back(*assign);
    } else if (const auto* stop = std::get_if<StopMsg>(&*message)) {
      stop_ = true;
      stop_reason_ = stop->reason;
    } else if (const auto* release = std::get_if<ReleaseMsg>(&*message)) {
      Release(*release);  // the trial that just ended, now that its result is durable
    }
  }
  return ReportQueuedNotStarted();
}

}  // namespace cleansweep
