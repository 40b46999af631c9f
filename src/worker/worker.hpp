// The loop on each worker rank: set up from the coordinator's config, then run one fresh process
// per assigned trial through the Launcher, relaying its reports and its outcome. A trial can fail
// in any way; the worker carries on. It never writes the study file.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "gpu/gpu_probe.hpp"
#include "launch/launcher.hpp"
#include "transport/transport.hpp"
#include "util/clock.hpp"
#include "worker/gpu_binding.hpp"
#include "worker/rendezvous_port.hpp"

namespace cleansweep {

struct WorkerIdentity {
  std::string host;
  std::string address;  // MASTER_ADDR of the gangs it leads; "" for ReachableAddress()
  int local_index = 0;  // among the workers on this node
  int local_count = 1;
  VisibleGpus visible_gpus;
  int cpu_count = 1;             // cores on this node, for OMP_NUM_THREADS
  std::string isolation;         // how the launcher contains trials here, for the user
  std::string no_gpu_telemetry;  // why GPU memory is not recorded here (no NVML), when it is not
};

class Worker {
 public:
  // Pointers must outlive the worker.
  Worker(Transport* transport, Launcher* launcher, WorkerIdentity identity);

  // Returns when the coordinator says stop. An error means the transport failed.
  Status Run();

  // Stop signals this process got (the CLI counts them): 1 = stop gracefully, 2 = stop now. The
  // coordinator normally gets the same signal and says how to stop; these cover a silent one.
  void SetSignalPoll(std::function<int()> poll) { signal_poll_ = std::move(poll); }
  // The clock of the times it records for the coordinator (the system clock unless set).
  void SetClock(const Clock* clock) { clock_ = clock; }

  // GPU memory telemetry and the clean-device check (docs/gpu.md); none without it. Must outlive
  // the worker.
  void SetGpuProbe(GpuProbe* probe) { gpu_probe_ = probe; }

  // Makes the launcher a config asks for, once the config arrives (the fork server, which loads
  // `program`, the resolved plugin); null means the launcher given to the constructor. An error
  // goes back to the coordinator as this worker's setup failure.
  using LauncherFactory =
      std::function<Result<std::unique_ptr<Launcher>>(const StudyConfig& config, const std::string& program)>;
  void SetLauncherFactory(LauncherFactory factory) { launcher_factory_ = std::move(factory); }

 private:
  Status SetUp(const SetupMsg& setup);
  Status RunTrial(const AssignMsg& assign);
  // Removes the checkpoints rank 0 released (trial.checkpoint_keep); a failure is a warning.
  void Release(const ReleaseMsg& release) const;
  // Define-by-run: the answer to the running trial's request for `asked`, a parameter the config
  // declares: its value in `assign` as JSON in *value_json, or why the trial cannot have it.
  std::optional<std::string> AnswerDeclared(const AssignMsg& assign, const ParamSpec& declared, const ParamSpec& asked,
                                            std::string* value_json) const;
  void Identify(const AssignMsg& assign, TrialRecord* record) const;  // the trial's number, parameters, worker
  // Adds who ran it and sends it to rank 0; `worker_fault`: why this worker cannot start trials.
  // `reported_values`: the trial's final values, filled into a multi-metric study's record.
  Status SendResult(const AssignMsg& assign, TrialRecord record, std::string worker_fault = "",
                    const std::vector<double>& reported_values = {});
  // After a stop: each trial still queued is reported INTERRUPTED, never started.
  Status ReportQueuedNotStarted();
  bool Signalled() const { return signal_poll_ && signal_poll_() > 0; }
  // GPU telemetry over a trial's GPUs (`gpus` as CUDA_VISIBLE_DEVICES lists them, `devices` one
  // by one): this worker's, or with `processes: single` every GPU of the gang, which its one
  // process uses.
  bool GpuIsClean(const std::string& gpus, TrialRecord* record);
  void SampleGpu(const std::vector<std::string>& devices, int process_group, TrialRecord* record, double* device_peak);
  // The energy counters of the GPUs summed, joules; nullopt when one of them counts none.
  std::optional<double> GpuEnergy(const std::vector<std::string>& devices) const;
  // The memory in use on the GPUs, summed, MiB; nullopt when one of them cannot tell.
  std::optional<double> GpuUsedMb(const std::vector<std::string>& devices) const;
  LaunchSpec SpecFor(const AssignMsg& assign) const;
  Result<Message> Await(const char* what);

  Transport* transport_;
  Launcher* launcher_;
  LauncherFactory launcher_factory_;
  std::unique_ptr<Launcher> own_launcher_;  // made by the factory; launcher_ points to it
  WorkerIdentity identity_;
  std::optional<StudyConfig> config_;
  std::string program_;
  std::string python_helper_;  // trial.objective: the folder of cleansweep_trial.py
  std::string gpu_;
  std::optional<RendezvousPort> port_;  // MASTER_PORT of the gang trials it leads, when the study has gangs
  std::string trials_root_;
  std::function<int()> signal_poll_;
  const Clock* clock_ = SystemClock::Get();
  std::optional<double> last_trial_end_;  // when this worker's last trial ended (worker_free_time)
  GpuProbe* gpu_probe_ = nullptr;
  std::set<int> earlier_gpu_pids_;  // processes of earlier trials seen holding memory on our GPUs
  std::deque<AssignMsg> queue_;     // trials handed out ahead (workers.queue), in the order they run
  bool cannot_start_ = false;       // a trial failed to start for a cause of this worker's (worker_fault)
  bool stop_ = false;
  std::string stop_reason_;  // the coordinator's, once stop_ is set
};

}  // namespace cleansweep
