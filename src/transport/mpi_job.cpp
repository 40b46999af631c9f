#include "transport/mpi_job.hpp"

#include "transport/mpi_transport.hpp"

namespace cleansweep {

struct MpiJob::Impl {
  int rank = 0;
  int size = 0;
  std::unique_ptr<MpiTransport> transport;
};

Result<std::unique_ptr<MpiJob>> MpiJob::Start(int* argc, char*** argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return Status::RuntimeError("MPI_Init failed; start cleansweep run with mpirun or srun");
  }
  auto impl = std::make_unique<Impl>();
  MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl->size);
  impl->transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD);
  return std::unique_ptr<MpiJob>(new MpiJob(std::move(impl)));
}

MpiJob::MpiJob(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiJob::~MpiJob() {
  impl_->transport.reset();
  MPI_Finalize();
}

int MpiJob::rank() const { return impl_->rank; }
int MpiJob::size() const { return impl_->size; }
Transport* MpiJob::transport() { return impl_->transport.get(); }

MpiJob::NodePlace MpiJob::WorkersOnThisNode() {
  NodePlace place;
  const int world_rank = impl_->rank;
  MPI_Comm everyone_here;  // every rank on this node, the coordinator included
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &everyone_here);
  int lowest = world_rank;
  MPI_Allreduce(&world_rank, &lowest, 1, MPI_INT, MPI_MIN, everyone_here);
  MPI_Comm_free(&everyone_here);
  place.coordinator_here = lowest == 0;
  MPI_Comm workers, node;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank == 0 ? MPI_UNDEFINED : 1, world_rank, &workers);
  if (workers == MPI_COMM_NULL) return place;
  MPI_Comm_split_type(workers, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &place.index);
  MPI_Comm_size(node, &place.count);
  MPI_Comm_free(&node);
  MPI_Comm_free(&workers);
  return place;
}

void MpiJob::Abort(int exit_code) { impl_->transport->AbortJob(exit_code); }

}  // namespace cleansweep
