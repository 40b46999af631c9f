// ReadStudyFile: a study file is input like any other, and HDF5 cannot be trusted with a damaged
// one (it follows unchecksummed lengths and addresses in the raw data: a segfault, or memset of
// terabytes). So the reading happens in a child process, the way trials run: whatever the file
// does to HDF5 ends in that child, and the caller gets "damaged" within seconds.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>

#include <cereal/archives/binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include "study/study_reader.hpp"
#include "util/unique_fd.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif

namespace cleansweep {
namespace {

// What crosses the pipe: the Status or the study, its config as the stored text (the parent parses
// it again: StudyConfig is not plain data).
struct Reply {
  int code = 0;  // Status::Code
  std::string message;
  std::string config_text;
  StudyData data;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(code, message, config_text, data.path, data.sampler, data.seed, data.cleansweep_version, data.schema_version,
       data.created, data.merged_from, data.stop_reason, data.warm_start, data.config_history, data.trials,
       data.intermediate, data.attempts, data.trial_defined, data.trial_defined_order);
  }
};

constexpr auto kBaseComputing = std::chrono::seconds(5);
constexpr double kBytesPerSecond = 32e6;  // a generous floor for reading a healthy file
constexpr auto kLeastWaiting = std::chrono::seconds(60);
constexpr int kWaitingPerComputing = 6;          // the clock may run this many times the computing
constexpr rlim_t kBaseMemory = rlim_t{2} << 30;  // 2 GiB, and 32 bytes a byte of file beyond that

[[noreturn]] void ReadInChild(const std::string& path, int out, off_t file_size,
                              const std::function<Result<StudyData>(const std::string&)>& read) {
#if !defined(__SANITIZE_ADDRESS__)  // ASan's shadow memory would count against the limit
  const rlim_t limit = std::max(kBaseMemory, static_cast<rlim_t>(file_size) * 32);
  const rlimit memory{limit, limit};
  ::setrlimit(RLIMIT_DATA, &memory);  // a damaged length asks for terabytes: fail fast instead
#else
  (void)file_size;
#endif
  // A crash here is the file's doing: die of the signal (no inherited handler, a fuzzer's or a
  // sanitizer's, should turn it into something else), and the parent says "damaged".
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  // HDF5 (or a sanitizer) may print about a damaged file; what counts is the answer on the pipe.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, STDERR_FILENO);
  Reply reply;
  Result<StudyData> study = read(path);
  if (study.ok()) {
    reply.config_text = study->config.yaml_text;
    reply.data = std::move(*study);
  } else {
    reply.code = static_cast<int>(study.status().code());
    reply.message = study.status().message();
  }
  std::ostringstream bytes;
  {
    cereal::BinaryOutputArchive archive(bytes);
    archive(reply);
  }
  const std::string text = bytes.str();
  ::_exit(WriteAll(out, text.data(), text.size()) ? 0 : 1);  // _exit: no atexit handlers (MPI, HDF5)
}

enum class Drained { kEof, kDeadline, kError };

// What the child writes, appended to `out`, until it closes the pipe or `deadline` comes.
Drained ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Drained::kDeadline;
    pollfd p{fd, POLLIN, 0};
    const int ready = RetryOnEintr([&] { return ::poll(&p, 1, static_cast<int>(left.count())); });
    if (ready < 0) return Drained::kError;
    if (ready == 0) return Drained::kDeadline;
    const ssize_t n = ReadRetry(fd, buf, sizeof buf);
    if (n <= 0) return n == 0 ? Drained::kEof : Drained::kError;
    out->append(buf, static_cast<size_t>(n));
  }
}

// The processor time `pid` has used (user and system), from /proc; nullopt where it cannot be read.
std::optional<std::chrono::milliseconds> ProcessorTime(pid_t pid) {
  const UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  char text[1024];
  const ssize_t n = fd.valid() ? ReadRetry(fd.get(), text, sizeof text - 1) : -1;
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  const char* after_name = std::strrchr(text, ')');  // the name may hold spaces and parentheses
  if (!after_name) return std::nullopt;
  std::istringstream fields(after_name + 1);
  std::string field;
  long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // utime and stime are fields 14 and 15
    if (i >= 14) ticks += std::atoll(field.c_str());
  }
  return std::chrono::milliseconds(ticks * 1000 / std::max(1L, ::sysconf(_SC_CLK_TCK)));
}

std::string Seconds(std::chrono::milliseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(t.count()) / 1000);
  return text;
}

}  // namespace

Result<StudyData> ReadStudyFileGuarded(const std::string& path, const ReadLimits& limits,
                                       const std::function<Result<StudyData>(const std::string&)>& read) {
  struct stat st {};
  const off_t size = ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t child = ::fork();
  if (child < 0) return Status::IoError(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    read_end.Reset();
    ReadInChild(path, write_end.get(), size, read);
  }
  write_end.Reset();
  // The child is one thread: its processor time grows no faster than the clock, so it cannot reach
  // `computing` before the clock has run what it still lacks. Look again then.
  const auto start = std::chrono::steady_clock::now();
  std::string bytes;
  Drained drained = Drained::kDeadline;
  std::chrono::milliseconds used{0};
  bool spinning = false;
  for (auto next = start + limits.computing;;) {
    drained = ReadUntil(read_end.get(), std::min(next, start + limits.waiting), &bytes);
    if (drained != Drained::kDeadline) break;
    // Where /proc cannot tell, the child counts as computing all the while (the clock decides).
    used = ProcessorTime(child).value_or(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
    spinning = used >= limits.computing;
    if (spinning || std::chrono::steady_clock::now() >= start + limits.waiting) break;
    next = std::chrono::steady_clock::now() + std::max(limits.computing - used, std::chrono::milliseconds(50));
  }
  const bool finished = drained == Drained::kEof;
  if (!finished) ::kill(child, SIGKILL);
  int wstatus = 0;
  RetryOnEintr([&] { return ::waitpid(child, &wstatus, 0); });
  if (drained == Drained::kError) return Status::IoError(path + ": reading the reader's answer failed");
  if (!finished && spinning) {
    return DamagedStudy(path, "reading it did not finish after " + Seconds(used) + " of computing");
  }
  if (!finished) {
    return Status::IoError(path + ": reading it did not finish within " + Seconds(limits.waiting) + " (only " +
                           Seconds(used) + " of it computing: the machine is busy or the file slow to " +
                           "read); try again");
  }
  if (WIFSIGNALED(wstatus)) {
    return DamagedStudy(path, std::string("reading it crashed (") + strsignal(WTERMSIG(wstatus)) + ")");
  }
  Reply reply;
  try {
    std::istringstream in(bytes);
    cereal::BinaryInputArchive archive(in);
    archive(reply);
  } catch (const std::exception& e) {  // cereal throws on a short or malformed stream
    return DamagedStudy(path, std::string("the reader gave no result (") + e.what() + ")");
  }
  if (reply.code != static_cast<int>(Status::Code::kOk)) {
    return reply.code == static_cast<int>(Status::Code::kInvalidInput) ? Status::InvalidInput(reply.message)
           : reply.code == static_cast<int>(Status::Code::kIoError)    ? Status::IoError(reply.message)
                                                                       : Status::RuntimeError(reply.message);
  }
  Result<StudyConfig> config = LoadConfigText(reply.config_text, path + " (stored config)");
  if (!config.ok()) return config.status();  // the child parsed the same text
  reply.data.config = std::move(*config);
  return std::move(reply.data);
}

Result<StudyData> ReadStudyFile(const std::string& path) {
  struct stat st {};
  const off_t size = ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
  const auto computing = std::chrono::duration_cast<std::chrono::milliseconds>(
      kBaseComputing + std::chrono::seconds(static_cast<long>(static_cast<double>(size) / kBytesPerSecond)));
  const auto waiting = std::max<std::chrono::milliseconds>(kLeastWaiting, kWaitingPerComputing * computing);
  return ReadStudyFileGuarded(path, {computing, waiting}, ReadStudyFileInProcess);
}

}  // namespace cleansweep
