// Status and Result<T>: how expected failures travel in cleansweep (see docs/architecture.md,
// "Error policy"). Programmer errors are assertions; only main() turns a Status into an exit code.
#pragma once

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

// CS_CHECK(cond): an invariant that protects data. Unlike assert it stays on in release builds:
// a broken one prints where and aborts, rather than writing a wrong row or reading out of bounds.
#define CS_CHECK(cond)                                                           \
  do {                                                                           \
    if (!(cond)) ::cleansweep::internal::CheckFailed(#cond, __FILE__, __LINE__); \
  } while (false)

namespace cleansweep {
namespace internal {
[[noreturn]] inline void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "cleansweep: internal error: check failed: %s at %s:%d (please report this)\n", condition, file,
               line);
  std::abort();
}
}  // namespace internal

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidInput,  // the user's config, flags or files are wrong: exit status 2
    kIoError,       // a file or pipe operation failed: exit status 1
    kRuntimeError,  // anything else that stopped the run: exit status 1
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message) { return Status(Code::kInvalidInput, std::move(message)); }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  static Status RuntimeError(std::string message) { return Status(Code::kRuntimeError, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // The same status with "context: " in front of the message; an ok status stays ok.
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a failed Status. Constructing from an ok Status is a programmer error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : value_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    CS_CHECK(!std::get<Status>(value_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }

  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace cleansweep

// Discards a Status on purpose; the comment beside it says why that is safe.
#define CS_IGNORE_ERROR(expr) static_cast<void>(expr)

#define CS_STATUS_CONCAT_INNER(a, b) a##b
#define CS_STATUS_CONCAT(a, b) CS_STATUS_CONCAT_INNER(a, b)

// CS_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (a Result<T>); returns its Status when it
// failed, else moves the value into `lhs` (a declaration such as `auto x` or an existing variable).
#define CS_ASSIGN_OR_RETURN(lhs, expr) CS_ASSIGN_OR_RETURN_IMPL(CS_STATUS_CONCAT(cs_result_, __LINE__), lhs, expr)
#define CS_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                             \
  if (!result.ok()) return result.status();         \
  lhs = std::move(result).value()

#define CS_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::cleansweep::Status cs_status_ = (expr); \
    if (!cs_status_.ok()) return cs_status_;  \
  } while (false)
