#include "launch/trial_cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace cleansweep {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WriteText(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() && WriteAll(fd.get(), text.data(), text.size());
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

std::optional<CgroupBase> SetUpCgroupBase(const std::string& proc, std::string* why) {
  std::string relative;
  {
    std::istringstream lines(ReadText(proc + "/self/cgroup"));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("0::", 0) == 0) relative = line.substr(3);
    }
  }
  std::string mount;
  {
    std::istringstream lines(ReadText(proc + "/self/mountinfo"));
    for (std::string line; std::getline(lines, line);) {
      const size_t dash = line.find(" - cgroup2 ");
      if (dash == std::string::npos) continue;
      std::istringstream fields(line.substr(0, dash));
      std::string field;
      for (int i = 0; i < 5 && fields >> field; ++i) {
        if (i == 4) mount = field;
      }
    }
  }
  if (relative.empty() || mount.empty()) {
    *why = "no cgroup v2 hierarchy is mounted for this process";
    return std::nullopt;
  }
  const std::string own = mount + (relative == "/" ? "" : relative);
  if (::access(own.c_str(), W_OK) != 0 || ::access((own + "/cgroup.procs").c_str(), F_OK) != 0) {
    *why = "this process's cgroup " + own + " is not writable";
    return std::nullopt;
  }
  CgroupBase base;
  base.dir = own + "/cleansweep-" + std::to_string(::getpid());
  if (::mkdir(base.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *why = "cannot create " + base.dir + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // memory.max needs the controller enabled on the base folder, which needs it in our own
  // cgroup's subtree_control first (possible only where nothing else lives in our cgroup, or at
  // the root). Try both; without it the memory limit falls back to RLIMIT_DATA.
  if (!HasWord(ReadText(base.dir + "/cgroup.controllers"), "memory") &&
      HasWord(ReadText(own + "/cgroup.controllers"), "memory")) {
    WriteText(own + "/cgroup.subtree_control", "+memory");
  }
  base.memory = HasWord(ReadText(base.dir + "/cgroup.controllers"), "memory") &&
                WriteText(base.dir + "/cgroup.subtree_control", "+memory");
  return base;
}

void RemoveCgroupBase(const CgroupBase& base) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base.dir, ec)) {
    if (entry.is_directory(ec)) ::rmdir(entry.path().c_str());
  }
  ::rmdir(base.dir.c_str());
}

Result<TrialCgroup> TrialCgroup::Create(const CgroupBase& base, const std::string& name, std::int64_t memory_limit) {
  TrialCgroup cgroup;
  cgroup.dir_ = base.dir + "/" + name;
  if (::mkdir(cgroup.dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::IoError(cgroup.dir_ + ": cannot create the trial's cgroup: " + std::strerror(errno));
  }
  if (base.memory && memory_limit > 0) {
    if (!WriteText(cgroup.dir_ + "/memory.max", std::to_string(memory_limit))) {
      ::rmdir(cgroup.dir_.c_str());
      return Status::IoError(cgroup.dir_ + "/memory.max: cannot set the memory limit: " + std::strerror(errno));
    }
    WriteText(cgroup.dir_ + "/memory.swap.max", "0");  // absent without swap accounting: fine
    cgroup.memory_limited_ = true;
  }
  cgroup.procs_ = UniqueFd(::open((cgroup.dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!cgroup.procs_.valid()) {
    const std::string error = std::strerror(errno);
    ::rmdir(cgroup.dir_.c_str());
    return Status::IoError(cgroup.dir_ + "/cgroup.procs: " + error);
  }
  return cgroup;
}

TrialCgroup::~TrialCgroup() {
  if (dir_.empty()) return;
  procs_.Reset();
  KillAll();
  WaitEmpty(1000);
  ::rmdir(dir_.c_str());
}

void TrialCgroup::KillAll() const {
  if (dir_.empty()) return;
  if (WriteText(dir_ + "/cgroup.kill", "1")) return;
  std::istringstream pids(ReadText(dir_ + "/cgroup.procs"));  // kernels before 5.14
  for (pid_t pid; pids >> pid;) {
    if (pid > 0) ::kill(pid, SIGKILL);  // never 0 or -1: those mean our group, or everyone
  }
}

bool TrialCgroup::WaitEmpty(int max_ms) const {
  for (int waited = 0;; waited += 5) {
    std::istringstream pids(ReadText(dir_ + "/cgroup.procs"));
    pid_t pid = 0;
    if (!(pids >> pid) || pid <= 0) return true;
    if (waited >= max_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::int64_t TrialCgroup::OomKills() const {
  std::istringstream events(ReadText(dir_ + "/memory.events"));
  for (std::string key; events >> key;) {
    std::int64_t n = 0;
    events >> n;
    if (key == "oom_kill") return n;
  }
  return 0;
}

std::optional<double> TrialCgroup::CpuSeconds() const {
  std::istringstream stat(ReadText(dir_ + "/cpu.stat"));
  for (std::string key; stat >> key;) {
    std::int64_t usec = 0;
    if (!(stat >> usec)) return std::nullopt;
    if (key == "usage_usec") return static_cast<double>(usec) * 1e-6;
  }
  return std::nullopt;
}

}  // namespace cleansweep
