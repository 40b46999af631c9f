// A Launcher that starts no process: each trial "runs" for a number of polls, reports steps and
// ends with an objective computed from its parameters. Trials with hang=true run until stopped.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "launch/launcher.hpp"
#include "trial/param_value.hpp"

#include <nlohmann/json.hpp>

namespace cleansweep::testing {

// objective = x (a float parameter) + 10 * n (an int parameter), when present.
inline double FakeObjective(const ParamSet& p) {
  double v = 0;
  if (p.count("x")) v += AsNumber(p.at("x"));
  if (p.count("n")) v += 10 * AsNumber(p.at("n"));
  return v;
}

class FakeTrial : public TrialProcess {
 public:
  FakeTrial(ParamSet params, int polls, bool hang, bool crash = false, int die_by = 0,
            std::atomic<int>* deaths = nullptr, std::int64_t number = 0, double seconds = 0.5)
      : params_(std::move(params)),
        polls_left_(polls),
        hang_(hang),
        crash_(crash),
        die_by_(die_by),
        deaths_(deaths),
        number_(number),
        seconds_(seconds) {}

  void Poll(Millis, std::vector<StepValue>* steps) override {
    if (finished_) return;
    if (step_pause_ > Millis(0)) std::this_thread::sleep_for(step_pause_);
    if (die_by_ != 0) {  // killed by a signal from outside (a batch system's SIGTERM, say)
      outcome_.state = TrialState::kCrash;
      outcome_.signal = die_by_;
      outcome_.reason = "killed by signal " + std::to_string(die_by_);
      finished_ = true;
      if (deaths_) ++*deaths_;
      return;
    }
    if (stop_) {
      outcome_.state = *stop_;
      outcome_.reason = reason_;
      finished_ = true;
      return;
    }
    StepValue report;
    report.step = step_;
    report.value = FakeObjective(params_) * static_cast<double>(step_ + 1);
    steps->push_back(report);
    if (checkpoints_) {                // declared after every step, as a trial that checkpoints each epoch does
      if (!checkpoint_dir_.empty()) {  // written first, as a real trial must
        std::filesystem::create_directories(checkpoint_dir_);
        std::ofstream(checkpoint_dir_ + "/step-" + std::to_string(step_)) << step_;
      }
      StepValue declared;
      declared.step = step_;
      declared.checkpoint = true;
      steps->push_back(declared);
      outcome_.checkpoint_step = step_;
    }
    outcome_.last_step = step_++;
    if (hang_ || --polls_left_ > 0) return;
    if (crash_) {
      outcome_.state = TrialState::kCrash;
      outcome_.signal = 11;
      outcome_.reason = "killed by signal 11 (Segmentation fault)";
      finished_ = true;
      return;
    }
    outcome_.state = TrialState::kComplete;
    outcome_.value = FakeObjective(params_);
    outcome_.exit_code = 0;
    outcome_.start_time = 1000.0 + static_cast<double>(number_);  // distinct times per trial
    outcome_.end_time = outcome_.start_time + seconds_;
    finished_ = true;
  }
  bool Finished() const override { return finished_; }
  void Stop(TrialState state, const std::string& reason) override {
    if (!stop_) stop_ = state, reason_ = reason;
  }
  void Kill(TrialState state, const std::string& reason) override { Stop(state, reason); }
  void RequestPrune(const std::string& reason, Millis) override {
    if (!stop_ && !finished_) {  // as a real trial: a word that comes after it ended changes nothing
      stop_ = TrialState::kPruned, reason_ = reason;
      outcome_.value = FakeObjective(params_) * static_cast<double>(step_);  // its last report
    }
  }
  const TrialOutcome& Outcome() const override { return outcome_; }
  // A trial that goes on from the checkpoint of `resume_step` (-1: from the start), and whether it
  // declares a checkpoint after each step.
  void Checkpointing(std::int64_t resume_step, bool declare) {
    step_ = resume_step + 1;
    checkpoints_ = declare;
  }
  // Each poll takes this long (a step of real work), so that a pruner's word arrives in time.
  void PausePerStep(Millis pause) { step_pause_ = pause; }
  // Checkpoints are also written as files `step-S` into this folder (none when empty).
  void WriteCheckpointsTo(std::string dir) { checkpoint_dir_ = std::move(dir); }

 private:
  ParamSet params_;
  int polls_left_;
  bool hang_;
  bool crash_;
  int die_by_;
  std::atomic<int>* deaths_;
  std::int64_t number_;
  double seconds_;
  std::int64_t step_ = 0;
  bool checkpoints_ = false;
  Millis step_pause_{0};
  std::string checkpoint_dir_;
  bool finished_ = false;
  std::optional<TrialState> stop_;
  std::string reason_;
  TrialOutcome outcome_;
};

class FakeLauncher : public Launcher {
 public:
  explicit FakeLauncher(bool hang = false) : hang_(hang) {}
  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override {
    if (fail_start_from > 0 && started + 1 >= fail_start_from) {
      return Status::IoError(spec.trial_dir + ": cannot create the trial folder: Read-only file system");
    }
    ++started;
    {
      std::lock_guard<std::mutex> lock(mutex_);  // workers run on several threads
      last_env_ = spec.env;
      envs_.push_back(spec.env);
    }
    Result<ParamSet> params = ParamSetFromJson(nlohmann::json::parse(spec.env.at("CLEANSWEEP_PARAMS")));
    const std::int64_t number = std::stoll(spec.env.at("CLEANSWEEP_TRIAL"));
    // A gang's process: its RANK (0 for an ordinary trial).
    const auto rank_env = spec.env.find("RANK");
    const int gang_rank = rank_env == spec.env.end() ? 0 : std::stoi(rank_env->second);
    const bool crash_rank_here = crash_rank >= 0 && gang_rank == crash_rank;
    const bool crash = std::stoi(spec.env.at("CLEANSWEEP_ATTEMPT")) < crash_until_attempt ||
                       crash_trials.count(number) || crash_rank_here;
    const bool hang = hang_ || (hang_from >= 0 && number >= hang_from) || (crash_rank >= 0 && !crash_rank_here);
    const auto resume = spec.env.find("CLEANSWEEP_RESUME_STEP");
    const bool resumes = resume != spec.env.end() && !resume->second.empty();
    const std::int64_t resume_step = resumes ? std::stoll(resume->second) : -1;
    // Uneven durations; or with `steps`, steps 0 .. steps - 1 in all, wherever it starts.
    int polls = steps > 0 ? static_cast<int>(steps - 1 - resume_step) : 1 + static_cast<int>(started % 3);
    if (crash_trials.count(number) || crash_rank_here) polls = std::min(polls, crash_after_steps);
    auto trial =
        std::make_unique<FakeTrial>(*params, polls, hang, crash, die_by_signal, &deaths, number, trial_seconds);
    trial->Checkpointing(resume_step, checkpoints);
    trial->PausePerStep(step_pause);
    if (write_checkpoints) trial->WriteCheckpointsTo(spec.env.at("CLEANSWEEP_CHECKPOINT_DIR"));
    if (resumes && write_checkpoints) {  // a real trial would load it: it must be there
      std::ifstream loaded(spec.env.at("CLEANSWEEP_CHECKPOINT_DIR") + "/step-" + resume->second);
      if (!loaded) missing_checkpoints.fetch_add(1);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (resumes) resumed_[number] = std::stoll(resume->second);
    }
    return std::unique_ptr<TrialProcess>(std::move(trial));
  }

  // Trials started from a checkpoint, and its step.
  std::map<std::int64_t, std::int64_t> resumed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return resumed_;
  }

  std::map<std::string, std::string> last_env() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_env_;
  }
  // The environment of every process started so far, in order.
  std::vector<std::map<std::string, std::string>> envs() {
    std::lock_guard<std::mutex> lock(mutex_);
    return envs_;
  }

  std::atomic<int> started{0};
  int crash_until_attempt = 0;          // attempts before this one crash (SIGSEGV)
  std::set<std::int64_t> crash_trials;  // these trials crash (SIGSEGV) after crash_after_steps steps
  int crash_after_steps = 1;
  // >= 0: in every gang trial the process of this RANK crashes (SIGSEGV) after crash_after_steps
  // steps, and the others run until stopped (as DDP processes wait on a peer that is gone).
  int crash_rank = -1;
  int fail_start_from = 0;         // the Nth start and every later one fail as on a read-only disk (0: none)
  int die_by_signal = 0;           // every trial dies of this signal at its first poll (0: none)
  std::atomic<int> deaths{0};      // trials that died of it so far
  double trial_seconds = 0.5;      // how long a completed trial says it ran (its start and end times)
  std::int64_t hang_from = -1;     // trials numbered this or higher run until stopped (-1: none)
  bool checkpoints = false;        // trials declare a checkpoint after every step
  std::int64_t steps = 0;          // > 0: every trial reports steps 0 .. steps - 1 (one per poll), then completes
  Millis step_pause{0};            // with steps: how long each step takes
  bool write_checkpoints = false;  // declared checkpoints are written as files too
  std::atomic<int> missing_checkpoints{0};  // trials started from a checkpoint file that was not there

 private:
  bool hang_;
  std::mutex mutex_;
  std::map<std::string, std::string> last_env_;
  std::vector<std::map<std::string, std::string>> envs_;
  std::map<std::int64_t, std::int64_t> resumed_;
};

}  // namespace cleansweep::testing
