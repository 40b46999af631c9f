#include "launch/output_capture.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "util/utf8.hpp"

namespace cleansweep {

Result<UniqueFd> CreateTrialFile(const std::string& path, const std::string& what) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::IoError(path + ": cannot remove what is there to create " + what +
                           " afresh: " + std::strerror(errno));
  }
  UniqueFd fd(
      RetryOnEintr([&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); }));
  if (!fd.valid()) return Status::IoError(path + ": cannot create " + what + ": " + std::strerror(errno));
  return fd;
}

Result<OutputCapture> OutputCapture::Open(const std::string& path, std::int64_t limit_bytes, int tail_lines) {
  Result<UniqueFd> fd = CreateTrialFile(path, "the trial log");
  if (!fd.ok()) return fd.status();
  return Writing(std::move(*fd), limit_bytes, tail_lines);
}

OutputCapture OutputCapture::Writing(UniqueFd fd, std::int64_t limit_bytes, int tail_lines) {
  OutputCapture capture;
  capture.fd_ = std::move(fd);
  capture.limit_ = limit_bytes;
  capture.tail_lines_ = tail_lines;
  return capture;
}

void OutputCapture::Write(const char* data, size_t size) {
  total_ += static_cast<std::int64_t>(size);
  if (written_ < limit_) {
    const auto n = static_cast<size_t>(std::min<std::int64_t>(limit_ - written_, static_cast<std::int64_t>(size)));
    WriteToFile(data, n);
    written_ += static_cast<std::int64_t>(n);  // counted as written even when it failed: the tail has it
  }
  tail_.append(data, size);
  if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
}

void OutputCapture::Close() {
  if (!fd_.valid()) return;
  const std::int64_t dropped = total_ - written_;
  if (dropped > 0) {
    // The tail shows how the trial ended; keep as much of it as was not already in the head.
    const size_t keep = static_cast<size_t>(std::min<std::int64_t>(dropped, static_cast<std::int64_t>(tail_.size())));
    const std::string marker = "\n[cleansweep: log limit reached, " +
                               std::to_string(dropped - static_cast<std::int64_t>(keep)) + " bytes omitted; the last " +
                               std::to_string(keep) + " bytes follow]\n";
    WriteToFile(marker.data(), marker.size());
    WriteToFile(tail_.data() + tail_.size() - keep, keep);
  }
  // A network file system may report a failed write only here.
  if (::close(fd_.release()) != 0 && write_error_.empty()) {
    write_error_ = "log.txt is incomplete: closing it failed (" + std::string(std::strerror(errno)) + ")";
  }
}

void OutputCapture::WriteToFile(const char* data, size_t size) {
  while (size > 0 && write_error_.empty()) {
    const ssize_t w = RetryOnEintr([&] { return ::write(fd_.get(), data, size); });
    if (w <= 0) {
      write_error_ = "log.txt is incomplete: writing it failed after " + std::to_string(file_bytes_) + " bytes (" +
                     (w == 0 ? std::string("no progress") : std::strerror(errno)) + ")";
      return;
    }
    data += w;
    size -= static_cast<size_t>(w);
    file_bytes_ += w;
  }
}

std::string OutputCapture::TailLines() const {
  if (tail_lines_ <= 0 || tail_.empty()) return "";
  size_t end = tail_.size();
  if (tail_[end - 1] == '\n') --end;
  size_t start = end;
  for (int lines = 0; start > 0; --start) {
    if (tail_[start - 1] == '\n' && ++lines == tail_lines_) break;
  }
  // The kept tail may begin inside a character (it was cut by bytes): start at the next one.
  while (start < end && (static_cast<unsigned char>(tail_[start]) & 0xC0) == 0x80) ++start;
  std::string out;
  for (size_t pos = start; pos < end;) {
    size_t nl = tail_.find('\n', pos);
    if (nl == std::string::npos || nl > end) nl = end;
    const std::string_view line(tail_.data() + pos, nl - pos);
    out += Utf8Prefix(line, kMaxLineBytes) + (line.size() > kMaxLineBytes ? "...\n" : "\n");
    pos = nl + 1;
  }
  return out;
}

}  // namespace cleansweep
