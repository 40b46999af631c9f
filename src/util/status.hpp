// Status and Result<T>: how expected failures travel in cleansweep (see docs/architecture.md,
// "Error policy"). Programmer errors are assertions; only main() turns a Status into an exit code.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cleansweep {

class Status {
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
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : value_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(value_).ok());
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

#define CS_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::cleansweep::Status cs_status_ = (expr); \
    if (!cs_status_.ok()) return cs_status_;  \
  } while (false)
