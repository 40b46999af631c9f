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
#include <cstring>
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
       data.created, data.merged_from, data.stop_reason, data.config_history, data.trials, data.intermediate,
       data.attempts);
  }
};

constexpr auto kBaseDeadline = std::chrono::seconds(5);
constexpr double kBytesPerSecond = 32e6;         // a generous floor for reading a healthy file
constexpr rlim_t kBaseMemory = rlim_t{2} << 30;  // 2 GiB, and 32 bytes a byte of file beyond that

[[noreturn]] void ReadInChild(const std::string& path, int out, off_t file_size) {
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
  Result<StudyData> study = ReadStudyFileInProcess(path);
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

// Everything the child writes until it closes the pipe, or false at the deadline.
bool ReadUntilEof(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = RetryOnEintr([&] { return ::poll(&p, 1, static_cast<int>(left.count())); });
    if (ready <= 0) return false;
    const ssize_t n = ReadRetry(fd, buf, sizeof buf);
    if (n <= 0) return n == 0;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

Result<StudyData> ReadStudyFile(const std::string& path) {
  struct stat st {};
  const off_t size = ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
  const auto deadline_span =
      kBaseDeadline + std::chrono::seconds(static_cast<long>(static_cast<double>(size) / kBytesPerSecond));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t child = ::fork();
  if (child < 0) return Status::IoError(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    read_end.Reset();
    ReadInChild(path, write_end.get(), size);
  }
  write_end.Reset();
  std::string bytes;
  const bool finished = ReadUntilEof(read_end.get(), std::chrono::steady_clock::now() + deadline_span, &bytes);
  if (!finished) ::kill(child, SIGKILL);
  int wstatus = 0;
  RetryOnEintr([&] { return ::waitpid(child, &wstatus, 0); });
  if (!finished) {
    return DamagedStudy(
        path, "reading it did not finish within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(deadline_span).count()) + " s");
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

}  // namespace cleansweep
