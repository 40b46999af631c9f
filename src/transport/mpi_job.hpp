// The MPI job this process is one rank of, for code that must not see MPI itself (MPI is the
// transport layer's: no other layer includes <mpi.h>). Starting it initialises MPI; destroying it
// finalises MPI.
#pragma once

#include <memory>

#include "transport/transport.hpp"
#include "util/status.hpp"

namespace cleansweep {

class MpiJob {
 public:
  // MPI_Init_thread (funnelled: only the main thread calls MPI). The error says how to start us.
  static Result<std::unique_ptr<MpiJob>> Start(int* argc, char*** argv);
  ~MpiJob();  // MPI_Finalize
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const;
  int size() const;

  // Where this rank stands among the worker ranks (every rank but 0) on its node, by rank order:
  // its index, how many there are, and whether rank 0 runs on the node too. Collective: every
  // rank of the job calls it, rank 0 included (which gets index 0 of count 0).
  struct NodePlace {
    int index = 0;
    int count = 0;
    bool coordinator_here = false;
  };
  NodePlace WorkersOnThisNode();

  // Point-to-point messages between the ranks (MPI_COMM_WORLD); lives as long as the job.
  Transport* transport();

  // Ends every rank of the job with `exit_code` (MPI_Abort). The last resort of a coordinator that
  // failed during the run and could not hear every worker out: such a worker may be blocked
  // sending a result nobody will receive, and a normal MPI_Finalize would wait for it for ever.
  [[noreturn]] void Abort(int exit_code);

 private:
  struct Impl;
  explicit MpiJob(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cleansweep
