// Messages over MPI point-to-point on MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include "transport/transport.hpp"

namespace cleansweep {

class MpiTransport : public Transport {
 public:
  // `comm` must outlive the transport; MPI must be initialised.
  explicit MpiTransport(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Send(int dest, const Message& message) override;
  // Open MPI's blocking receive spins a core at 100%, so this probes and sleeps instead: the
  // sleep starts at 50 us after traffic and doubles to 10 ms when idle (under 1% of a core), or
  // to 200 us while SetResponsive(true) (a few percent of a core, while an answer is awaited).
  Result<std::optional<Envelope>> Receive(Millis max_wait) override;
  void SetResponsive(bool responsive) override;

  // Ends every rank of the job with `exit_code` (MPI_Abort). For a coordinator that failed during
  // the run: a worker may be blocked sending it a large result that nobody will receive, and a
  // normal MPI_Finalize would then wait for that worker for ever.
  [[noreturn]] void AbortJob(int exit_code);

 private:
  Result<std::optional<Envelope>> TryReceive();

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  static constexpr std::chrono::microseconds kIdleSleep{10'000};
  static constexpr std::chrono::microseconds kResponsiveSleep{200};
  std::chrono::microseconds idle_sleep_{50};
  std::chrono::microseconds max_sleep_ = kIdleSleep;
};

// "MPI_Send: <MPI_Error_string>" for a failed call.
Status MpiError(const char* call, int code);

}  // namespace cleansweep
