#include "transport/mpi_transport.hpp"

#include <cstdio>
#include <cstdlib>

#include <chrono>
#include <thread>

namespace cleansweep {

Status MpiError(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::RuntimeError(std::string(call) + ": " + std::string(text, static_cast<size_t>(length)));
}

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Status MpiTransport::Send(int dest, const Message& message) {
  const std::string payload = Encode(message);
  const int rc = MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, dest,
                          static_cast<int>(TagOf(message)), comm_);
  if (rc != MPI_SUCCESS) return MpiError("MPI_Send", rc);
  return Status::Ok();
}

Result<std::optional<Envelope>> MpiTransport::TryReceive() {
  int flag = 0;
  MPI_Status status;
  int rc = MPI_SUCCESS;
  // Open MPI's Iprobe looks at what has arrived before it runs the progress engine, so a message
  // that came in while we slept shows up only on the second call.
  for (int attempt = 0; attempt < 2 && rc == MPI_SUCCESS && !flag; ++attempt) {
    rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &status);
  }
  if (rc != MPI_SUCCESS) return MpiError("MPI_Iprobe", rc);
  if (!flag) return std::optional<Envelope>();
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string payload(static_cast<size_t>(count), '\0');
  rc = MPI_Recv(payload.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm_, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return MpiError("MPI_Recv", rc);
  Result<Message> message = Decode(status.MPI_TAG, payload);
  if (!message.ok()) return message.status().WithContext("from rank " + std::to_string(status.MPI_SOURCE));
  return std::optional<Envelope>(Envelope{status.MPI_SOURCE, std::move(*message)});
}

Result<std::optional<Envelope>> MpiTransport::Receive(Millis max_wait) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + max_wait;
  while (true) {
    Result<std::optional<Envelope>> got = TryReceive();
    if (!got.ok() || got->has_value()) {
      idle_sleep_ = std::chrono::microseconds(50);
      return got;
    }
    const auto now = Clock::now();
    if (now >= deadline) return got;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(idle_sleep_, left));
    idle_sleep_ = std::min(idle_sleep_ * 2, max_sleep_);
  }
}

void MpiTransport::SetResponsive(bool responsive) {
  max_sleep_ = responsive ? kResponsiveSleep : kIdleSleep;
  idle_sleep_ = std::min(idle_sleep_, max_sleep_);
}

void MpiTransport::AbortJob(int exit_code) {
  std::fflush(nullptr);
  MPI_Abort(comm_, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, leave anyway
}

}  // namespace cleansweep
