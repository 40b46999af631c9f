#include "util/output_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/unique_fd.hpp"

namespace cleansweep {
namespace {

namespace fs = std::filesystem;

bool SameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && ca == cb;
}

}  // namespace

Status CheckOutputPath(const std::string& output, const std::vector<std::string>& inputs, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(output, ec)) {
    return Status::InvalidInput(output + ": is a folder; give " + what + " a file name (e.g. " +
                                (fs::path(output) / "out").string() + ")");
  }
  for (const std::string& input : inputs) {
    if (SameFile(output, input)) {
      return Status::InvalidInput(output + ": " + what + " would overwrite its input, the study file " + input +
                                  "; choose another output with -o");
    }
    if (SameFile(output, input + ".lock")) {
      return Status::InvalidInput(output + ": " + what + " would overwrite the lock file of the study " + input +
                                  "; choose another output with -o");
    }
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  // A device, a pipe or a socket (`-o /dev/stdout`, a named pipe) is written in place: a file
  // renamed over it would replace the node itself (run as root, `-o /dev/full` did).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    UniqueFd fd(RetryOnEintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC); }));
    if (!fd.valid()) return Status::IoError(path + ": cannot write: " + std::strerror(errno));
    if (!WriteAll(fd.get(), content.data(), content.size())) {
      return Status::IoError(path + ": writing failed: " + std::strerror(errno));
    }
    return Status::Ok();
  }
  // Through a link, the file it names is replaced and the link stays (`-o /dev/stdout` into a
  // file: the file, never /dev/stdout itself).
  std::error_code ec;
  fs::path target(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {  // a link to a file not made yet too
    const fs::path to = fs::read_symlink(target, ec);
    if (ec) break;
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  const std::string temporary =
      (target.parent_path() / ("." + target.filename().string() + ".partial-" + std::to_string(::getpid()))).string();
  const auto failed = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    return Status::IoError(path + ": " + what + ": " + reason);
  };
  {
    UniqueFd fd(
        RetryOnEintr([&] { return ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); }));
    if (!fd.valid()) return Status::IoError(path + ": cannot write (" + temporary + "): " + std::strerror(errno));
    if (!WriteAll(fd.get(), content.data(), content.size())) return failed("writing failed");
    if (RetryOnEintr([&] { return ::fsync(fd.get()); }) != 0) return failed("writing to disk failed");
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) return failed("cannot put the new file in place");
  return Status::Ok();
}

Status RenameNoReplace(const std::string& from, const std::string& to) {
  const auto exists = [&] { return Status::InvalidInput(to + ": a file already exists here; it was left as it is"); };
  const auto failed = [&](int error) {
    return Status::IoError(to + ": cannot put the new file in place (from " + from + "): " + std::strerror(error));
  };
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return Status::Ok();
  if (errno == EEXIST) return exists();
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return failed(errno);
  // The file system lacks the flag (some network and FUSE ones): a hard link never replaces either.
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return Status::Ok();
  }
  if (errno == EEXIST) return exists();
  if (errno != EPERM && errno != ENOTSUP && errno != EMLINK) return failed(errno);
  std::error_code ec;
  if (fs::exists(to, ec) || ec) return exists();
  if (::rename(from.c_str(), to.c_str()) != 0) return failed(errno);
  return Status::Ok();
}

}  // namespace cleansweep
