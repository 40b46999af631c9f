// A tiny trial program for the tests: its objective is a known function of its parameters, and the
// `mode` parameter (or TOY_MODE) makes it misbehave in each way a real trial can.
//
//   objective = 1 - (x - 0.3)^2 - (n - 4)^2 / 100   [+ 0.05 when opt == "b"]
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cleansweep/trial.hpp>

namespace {

double Objective(const cleansweep::Trial& t) {
  const double x = t.GetDouble("x", 0.0);
  const double n = static_cast<double>(t.GetInt("n", 4));
  return 1.0 - (x - 0.3) * (x - 0.3) - (n - 4) * (n - 4) / 100.0 + (t.GetString("opt", "a") == "b" ? 0.05 : 0.0);
}

// Appends `pid` to pids.txt in the trial folder, so tests can check that it is gone later.
void RecordPid(pid_t pid) {
  const char* dir = std::getenv("CLEANSWEEP_TRIAL_DIR");
  if (!dir) return;
  if (std::FILE* f = std::fopen((std::string(dir) + "/pids.txt").c_str(), "a")) {
    std::fprintf(f, "%d\n", static_cast<int>(pid));
    std::fclose(f);
  }
}

double CpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Modes "gpu" and "gpuleak": "hold" gpu_mb MiB on each of the trial's GPUs as tests/gpu/fake_nvml.c
// sees it, through a file of its own in $FAKE_NVML_STATE.d; "gpu" lets go when it ends, "gpuleak"
// not. With gpu_energy_j, the trial also adds that much to each GPU's energy counter, for good.
std::string HoldFakeGpuMemory(const cleansweep::Trial& trial) {
  const char* state = std::getenv("FAKE_NVML_STATE");
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!state || !visible || !*visible) return "";
  std::vector<std::string> devices;
  std::stringstream list(visible);
  for (std::string device; std::getline(list, device, ',');) devices.push_back(device);
  const std::string path = std::string(state) + ".d/" + std::to_string(::getpid());
  if (std::FILE* f = std::fopen(path.c_str(), "w")) {
    for (const std::string& device : devices) {
      std::fprintf(f, "process %s %d %g\n", device.c_str(), static_cast<int>(::getpid()),
                   trial.GetDouble("gpu_mb", 512));
    }
    std::fclose(f);
  }
  if (const double joules = trial.GetDouble("gpu_energy_j", 0); joules > 0) {
    const std::string energy = std::string(state) + ".d/energy-" + std::to_string(::getpid());
    if (std::FILE* f = std::fopen(energy.c_str(), "w")) {
      for (const std::string& device : devices) std::fprintf(f, "energy %s %.0f\n", device.c_str(), joules * 1e3);
      std::fclose(f);
    }
  }
  return path;
}

}  // namespace

// Modes "curve" and "ignoreprune": a learning curve known in advance, value q * s / steps at steps
// 1..steps, step_sleep seconds apart. "curve" stops when pruned; "ignoreprune" never looks.
int Curve(cleansweep::Trial& trial, bool obey) {
  const double q = trial.GetDouble("q", 0.5);
  const std::int64_t steps = trial.GetInt("steps", 9);
  const double sleep_s = trial.GetDouble("step_sleep", 0.02);
  for (std::int64_t s = 1; s <= steps; ++s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));  // "training"
    if (obey && trial.ShouldPrune()) {                                    // checked before reporting more work
      std::printf("pruned after step %lld\n", static_cast<long long>(s - 1));
      return 0;
    }
    trial.Report(s, q * static_cast<double>(s) / static_cast<double>(steps));
  }
  trial.Finish(q);
  return 0;
}

// Mode "fresh" shows what a trial inherits from the fork server: the state after loading and
// cleansweep_trial_prepare(), never what an earlier trial did. Every run counts itself in g_runs
// and leaves 64 MiB behind; in a fresh process each trial still sees g_runs == 0 first.
int g_runs = 0;
int g_prepared = 0;
std::vector<char>* g_ballast = nullptr;

int ToyMain(int argc, char** argv) {
  cleansweep::Trial trial = cleansweep::Trial::FromEnvironment();
  const char* env_mode = std::getenv("TOY_MODE");
  const std::string mode = trial.GetString("mode", env_mode ? env_mode : "ok");
  if (mode == "fresh") {
    const int seen = g_runs++;
    g_ballast = new std::vector<char>(64 << 20, 1);  // touched: resident, and never freed
    trial.SetAttr("prepared", static_cast<double>(g_prepared));
    trial.SetAttr("pid", static_cast<double>(::getpid()));
    trial.Finish(static_cast<double>(seen));
    return 0;
  }
  if (mode == "curve" || mode == "ignoreprune") {
    std::printf("toy trial %lld mode %s\n", static_cast<long long>(trial.number()), mode.c_str());
    std::fflush(stdout);
    return Curve(trial, mode == "curve");
  }
  const double sleep_s = trial.GetDouble("sleep", 0.0);
  // A process of a gang trial (trial.gpus): its place, as the worker gave it, for the tests.
  if (const char* rank = std::getenv("RANK"); rank && std::getenv("CLEANSWEEP_TRIAL_DIR")) {
    if (std::FILE* f =
            std::fopen((std::string(std::getenv("CLEANSWEEP_TRIAL_DIR")) + "/rank-" + rank + ".txt").c_str(), "w")) {
      std::fprintf(f, "%s %s %s\n", std::getenv("WORLD_SIZE"), std::getenv("LOCAL_RANK"), std::getenv("MASTER_PORT"));
      std::fclose(f);
    }
  }
  std::printf("toy trial %lld mode %s\n", static_cast<long long>(trial.number()), mode.c_str());
  std::fflush(stdout);
  if (mode == "echoargs") {  // its arguments, NUL-terminated, byte for byte, into args.bin
    const std::string path = std::string(std::getenv("CLEANSWEEP_TRIAL_DIR")) + "/args.bin";
    std::FILE* out = std::fopen(path.c_str(), "wb");
    for (int i = 1; out && i < argc; ++i) std::fwrite(argv[i], 1, std::strlen(argv[i]) + 1, out);
    if (!out || std::fclose(out) != 0) return 5;
    std::FILE* params = std::fopen((std::string(std::getenv("CLEANSWEEP_TRIAL_DIR")) + "/params.json").c_str(), "w");
    if (!params || std::fputs(std::getenv("CLEANSWEEP_PARAMS"), params) < 0 || std::fclose(params) != 0) return 5;
  }
  RecordPid(::getpid());
  if (mode == "escape") {  // fork-and-forget: a child in a session of its own that outlives the trial
    const pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      const pid_t grandchild = ::fork();
      if (grandchild == 0) {  // and a grandchild, so that the first one's death re-parents it
        ::execlp("sleep", "sleep", "600", static_cast<char*>(nullptr));
        _exit(127);
      }
      RecordPid(::getpid());
      RecordPid(grandchild);
      ::pause();
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let both record themselves
  }
  if (mode == "spin") {  // burns spin_s seconds of its own CPU time, for the cost columns
    const double until = CpuSeconds() + trial.GetDouble("spin_s", 0.3);
    for (volatile double x = 0; CpuSeconds() < until;) x = x + 1;
  }
  if (mode == "twometrics" || mode == "missingmetric") {  // issue 18: accuracy against a cost, by name
    const double accuracy = Objective(trial);
    const double cost = trial.GetDouble("x", 0.0) + static_cast<double>(trial.GetInt("n", 4)) / 8.0;
    for (int step = 0; step < 3; ++step) {
      trial.Report(step, {{"accuracy", accuracy * (step + 1) / 3.0}, {"cost", cost}});
    }
    if (mode == "missingmetric") {
      trial.Finish(std::map<std::string, double>{{"accuracy", accuracy}});
    } else {
      trial.Finish({{"accuracy", accuracy}, {"cost", cost}});
    }
    return 0;
  }
  const std::string gpu_hold = mode == "gpu" || mode == "gpuleak" ? HoldFakeGpuMemory(trial) : "";
  const double value = Objective(trial);
  for (int step = 0; step < 3; ++step) trial.Report(step, value * (step + 1) / 3.0);
  if (sleep_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
  if (mode == "gpu" && !gpu_hold.empty()) std::remove(gpu_hold.c_str());
  if (mode == "crash") {
    std::fprintf(stderr, "toy: about to crash\n");
    ::raise(SIGSEGV);
  }
  if (mode == "fail") {
    std::fprintf(stderr, "toy: failing on purpose\n");
    return 3;
  }
  if (mode == "noreport") return 0;
  if (mode == "malformed") {
    const char* junk = "this is not json\n";
    if (::write(std::atoi(std::getenv("CLEANSWEEP_REPORT_FD")), junk, std::strlen(junk)) < 0) return 9;
    std::this_thread::sleep_for(std::chrono::seconds(30));  // the worker must not wait for this
    return 0;
  }
  if (mode == "hang") {
    std::this_thread::sleep_for(std::chrono::seconds(600));
  }
  if (mode == "deepattrs") {  // issue 15: one 600 KB report line nested 100,000 deep
    std::string line = "{\"attrs\": ";
    for (int i = 0; i < 100000; ++i) line += "{\"a\":";
    line += "1" + std::string(100000, '}') + "}\n";
    if (::write(std::atoi(std::getenv("CLEANSWEEP_REPORT_FD")), line.data(), line.size()) < 0) return 9;
    trial.Finish(Objective(trial));
    return 0;
  }
  if (mode == "bigattrs") {  // 30 KB of attrs: a study file that grows fast
    trial.SetAttr("blob", std::string(30000, 'x'));
    trial.Finish(Objective(trial));
    return 0;
  }
  if (mode == "utf8") {  // issue 15: output whose lines are cut mid-character, and bytes that are not UTF-8
    std::string euros;
    for (int i = 0; i < 400; ++i) euros += "\xE2\x82\xAC";
    std::printf("%s\nnot utf-8: \xFF\xFE\xC0\n", euros.c_str());
    std::fflush(stdout);
    trial.Finish(Objective(trial));
    return 0;
  }
  if (mode == "grandchild") {  // leaves a grandchild in its process group, then hangs
    const pid_t child = ::fork();
    if (child == 0) {
      ::execlp("sleep", "sleep", "600", static_cast<char*>(nullptr));
      _exit(127);
    }
    RecordPid(child);
    std::this_thread::sleep_for(std::chrono::seconds(600));
  }
  if (mode == "ignoreterm") {  // survives SIGTERM: only SIGKILL ends it
    ::signal(SIGTERM, SIG_IGN);
    std::this_thread::sleep_for(std::chrono::seconds(600));
  }
  if (mode == "flood") {  // 40 MiB of output, far past any sane log limit
    std::string line(1023, 'x');
    line += '\n';
    for (int i = 0; i < 40 * 1024; ++i) std::fwrite(line.data(), 1, line.size(), stdout);
    std::printf("flood done\n");
    std::fflush(stdout);
  }
  if (mode == "hog") {  // touches memory 16 MiB at a time until an allocation fails (std::bad_alloc)
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 256; ++i) {  // 4 GiB at most: past that, no limit is working
      blocks.emplace_back(new char[16 << 20]);
      std::memset(blocks.back().get(), 1, 16 << 20);
    }
    std::fprintf(stderr, "toy: allocated 4 GiB without hitting a limit\n");
    return 4;
  }
  if (mode == "abort") ::abort();
  if (mode == "sigkill") ::raise(SIGKILL);  // as the kernel's OOM killer would
  if (mode == "oom") {
    trial.ReportOutOfMemory("gpu", "CUDA out of memory. Tried to allocate 2.00 GiB");
    return cleansweep::kExitOutOfMemory;
  }
  if (mode == "markup") {  // words that are markup, for the report: they must stay text
    trial.ReportOutOfMemory("gpu", "<!--<script> and </script> from the trial");
    return cleansweep::kExitOutOfMemory;
  }
  trial.SetAttr("mode", mode);
  trial.SetAttr("twice", 2.0 * value);
  trial.Finish(value);
  return 0;
}

#ifdef TOY_TRIAL_PLUGIN
namespace {
// Starts a process that sleeps for ten minutes and appends its pid to `pids` (written here, before
// returning, so the file is complete when prepare() is); with `own_session` it leaves the server's
// process group (setsid), as a daemonising helper would.
void StartSleeper(const char* pids, bool own_session) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (own_session) ::setsid();
    ::sleep(600);
    ::_exit(0);
  }
  if (std::FILE* f = std::fopen(pids, "a")) {
    std::fprintf(f, "%d\n", static_cast<int>(pid));
    std::fclose(f);
  }
}

int Prepare() {
  g_prepared = 42;  // what every forked trial inherits
  // A file kept open, as a CUDA context keeps /dev/nvidia* open: the server must refuse that.
  if (const char* path = std::getenv("TOY_PREPARE_OPEN")) ::open(path, O_RDONLY);
  // Helper processes (a data-loading pool, say): they must die with the server.
  if (const char* pids = std::getenv("TOY_PREPARE_CHILDREN")) {
    StartSleeper(pids, false);
    StartSleeper(pids, true);
  }
  // A data set loaded once, shared copy-on-write by every trial: not the trials' own memory.
  if (const char* mb = std::getenv("TOY_PREPARE_MB")) g_ballast = new std::vector<char>(std::stoul(mb) << 20, 1);
  if (const char* seconds = std::getenv("TOY_PREPARE_SLEEP")) ::sleep(static_cast<unsigned>(std::atoi(seconds)));
  return std::getenv("TOY_PREPARE_FAILS") ? 7 : 0;
}
}  // namespace
CLEANSWEEP_TRIAL_PLUGIN(ToyMain)
CLEANSWEEP_TRIAL_PREPARE(Prepare)
#else
int main(int argc, char** argv) { return ToyMain(argc, argv); }
#endif
