// Which GPU a worker's trials get. Each worker gives its trials exactly one device through
// CUDA_VISIBLE_DEVICES: entry (i mod n) of the devices its node lets it see, where i is the
// worker's index among the workers on its node. The rules, with examples for nodes with 4 and 8
// GPUs, are in docs/slurm.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cleansweep {

// Reads an environment variable; nullopt when unset. Tests fake Slurm's and Open MPI's.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnvironment();

// The worker's index among the `workers_on_node` workers of its node. Under srun it is
// SLURM_LOCALID, less one on the node that also runs the coordinator (rank 0 is always local task
// 0 of its node); elsewhere, or if SLURM_LOCALID is out of range, `mpi_index`: the worker's rank
// among the node's workers from MPI_Comm_split_type, which gives the same under srun.
int WorkerIndexOnNode(const EnvLookup& env, int mpi_index, int workers_on_node, bool coordinator_on_node);

struct VisibleGpus {
  std::vector<std::string> devices;  // as CUDA names them: indices, GPU-<uuid> or MIG-<uuid>
  std::string source;                // where the list came from, for the user
};

// The devices this process may use, from the first of:
//  1. CUDA_VISIBLE_DEVICES, when set (empty hides every GPU). Slurm sets it for steps with GPUs;
//     "NoDevFiles" (GRES without device files) counts as unset.
//  2. SLURM_STEP_GPUS, then SLURM_JOB_GPUS: Slurm's device indices on this node.
//  3. SLURM_GPUS_ON_NODE=n: devices 0..n-1.
//  4. One index per GPU the NVIDIA driver lists in <proc_root>/driver/nvidia/gpus.
VisibleGpus DetectVisibleGpus(const EnvLookup& env, const std::string& proc_root = "/proc");

struct GpuAssignment {
  std::string device;  // CUDA_VISIBLE_DEVICES for the worker's trials; "" means the CPU
  std::string note;    // a warning for the user when GPUs are shared or left idle; "" if fine
};

// `option` is workers.gpus: "none" -> the CPU; "auto" -> visible[local_index % n] (the CPU when
// there is none); a comma list -> its entries round robin. `local_count` is how many workers
// share this node, for the notes.
GpuAssignment AssignGpu(const std::string& option, const VisibleGpus& visible, int local_index, int local_count);

}  // namespace cleansweep
