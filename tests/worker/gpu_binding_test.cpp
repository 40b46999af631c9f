// GPU binding against faked Slurm and Open MPI environments: which device each worker of a
// multi-node job gets, from the variables Slurm sets and the task layout scripts/slurm uses.
#include "worker/gpu_binding.hpp"

#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using Env = std::map<std::string, std::string>;

EnvLookup Fake(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::vector<std::string> Devices(const Env& env, const std::string& proc = "/nonexistent") {
  return DetectVisibleGpus(Fake(env), proc).devices;
}

TEST(DetectVisibleGpus, FollowsCudaThenSlurmThenTheDriver) {
  testing::TempDir proc;
  std::filesystem::create_directories(proc.File("driver/nvidia/gpus/0000:01:00.0"));
  std::filesystem::create_directories(proc.File("driver/nvidia/gpus/0000:02:00.0"));
  using V = std::vector<std::string>;
  EXPECT_EQ(Devices({}, proc.path()), (V{"0", "1"}));  // mpirun on a GPU box: the driver's list
  EXPECT_TRUE(Devices({}).empty());                    // no driver: the CPU
  EXPECT_EQ(Devices({{"CUDA_VISIBLE_DEVICES", "GPU-8a1f,GPU-77c2"}}, proc.path()), (V{"GPU-8a1f", "GPU-77c2"}));
  EXPECT_EQ(Devices({{"CUDA_VISIBLE_DEVICES", "MIG-5c1e/1/0"}}), (V{"MIG-5c1e/1/0"}));
  EXPECT_TRUE(Devices({{"CUDA_VISIBLE_DEVICES", ""}}, proc.path()).empty());  // set but empty hides all
  // Slurm without device files in gres.conf sets NoDevFiles: fall back to its own variables.
  EXPECT_EQ(Devices({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}, {"SLURM_STEP_GPUS", "2,3"}}), (V{"2", "3"}));
  EXPECT_EQ(Devices({{"SLURM_JOB_GPUS", "5"}}), (V{"5"}));
  EXPECT_EQ(Devices({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}, {"SLURM_GPUS_ON_NODE", "3"}}), (V{"0", "1", "2"}));
  const VisibleGpus described = DetectVisibleGpus(Fake({{"CUDA_VISIBLE_DEVICES", "0,1"}}), proc.path());
  EXPECT_EQ(described.source, "CUDA_VISIBLE_DEVICES=0,1");
}

TEST(WorkerIndexOnNode, ComesFromSlurmLocalIdWhenItMakesSense) {
  EXPECT_EQ(WorkerIndexOnNode(Fake({{"SLURM_LOCALID", "3"}}), 9, 4, /*coordinator_on_node=*/true), 2);
  EXPECT_EQ(WorkerIndexOnNode(Fake({{"SLURM_LOCALID", "3"}}), 9, 4, false), 3);
  EXPECT_EQ(WorkerIndexOnNode(Fake({}), 1, 4, true), 1);                         // mpirun: MPI's index
  EXPECT_EQ(WorkerIndexOnNode(Fake({{"SLURM_LOCALID", "7"}}), 1, 4, false), 1);  // out of range
  EXPECT_EQ(WorkerIndexOnNode(Fake({{"SLURM_LOCALID", "x"}}), 2, 4, false), 2);
}

TEST(AssignGpu, RoundRobinOverTheVisibleDevices) {
  const VisibleGpus visible{{"0", "1", "2", "3"}, "test"};
  EXPECT_EQ(AssignGpu("auto", visible, 0, 4).device, "0");
  EXPECT_EQ(AssignGpu("auto", visible, 3, 4).device, "3");
  EXPECT_EQ(AssignGpu("auto", visible, 5, 6).device, "1");  // more workers than GPUs share them
  EXPECT_EQ(AssignGpu("auto", {}, 2, 3).device, "");        // no GPU: the CPU
  EXPECT_EQ(AssignGpu("none", visible, 0, 1).device, "");
  EXPECT_EQ(AssignGpu("2,3", visible, 0, 2).device, "2");  // an explicit list overrides detection
  EXPECT_EQ(AssignGpu("2,3", visible, 1, 2).device, "3");
  EXPECT_EQ(AssignGpu("2,3", {}, 2, 3).device, "2");
}

TEST(AssignGpu, WarnsOnceANodeWhenGpusAreSharedOrIdle) {
  const VisibleGpus four{{"0", "1", "2", "3"}, "test"};
  EXPECT_EQ(AssignGpu("auto", four, 0, 4).note, "");
  EXPECT_EQ(AssignGpu("auto", four, 0, 6).note,
            "6 workers share 4 GPUs: some GPUs run several trials at once (one worker per GPU avoids it)");
  EXPECT_EQ(AssignGpu("auto", four, 1, 6).note, "");  // the node's first worker speaks for it
  EXPECT_EQ(AssignGpu("auto", four, 0, 2).note, "2 of 4 GPUs stay idle (2,3): start one worker per GPU");
  EXPECT_EQ(AssignGpu("auto", VisibleGpus{{"7"}, "per task"}, 0, 8).note, "");  // --gpus-per-task=1
}

// One node of a simulated job: its name, its GPUs as Slurm lists them, and how it binds them.
struct Node {
  std::string name;
  std::vector<std::string> gpus;
  bool per_task = false;  // srun --gpus-per-task=1: each task sees only its own GPU
};

// The layout scripts/slurm/task-layout.sh writes: the first node runs the coordinator and one
// worker per GPU, every other node one worker per GPU. Returns the device every rank's trials get
// ("" for the coordinator), after checking that the index from SLURM_LOCALID (less one on the
// coordinator's node) and the one from MPI agree.
std::vector<std::string> SimulateJob(const std::vector<Node>& nodes) {
  struct Task {
    size_t node;
    int local_id;
  };
  std::vector<Task> tasks;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const size_t count = nodes[n].gpus.size() + (n == 0 ? 1 : 0);
    for (size_t i = 0; i < count; ++i) tasks.push_back({n, static_cast<int>(i)});
  }
  std::vector<int> workers_on(nodes.size(), 0);  // MPI_Comm_split_type over the workers
  for (size_t rank = 1; rank < tasks.size(); ++rank) ++workers_on[tasks[rank].node];
  std::vector<int> next_index(nodes.size(), 0);
  std::vector<std::string> devices = {""};
  for (size_t rank = 1; rank < tasks.size(); ++rank) {
    const Task& task = tasks[rank];
    const Node& node = nodes[task.node];
    const int mpi_index = next_index[task.node]++;  // what MPI_Comm_split_type over the workers gives
    Env env = {{"SLURM_LOCALID", std::to_string(task.local_id)},
               {"SLURM_GPUS_ON_NODE", std::to_string(node.gpus.size())},
               {"SLURM_PROCID", std::to_string(rank)},
               {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(task.local_id)}};
    const int index = WorkerIndexOnNode(Fake(env), mpi_index, workers_on[task.node], task.node == 0);
    EXPECT_EQ(index, mpi_index) << "rank " << rank << ": SLURM_LOCALID and MPI disagree";
    if (node.per_task) {
      env["CUDA_VISIBLE_DEVICES"] = node.gpus[static_cast<size_t>(index)];
    } else {
      std::string list;
      for (const std::string& g : node.gpus) list += (list.empty() ? "" : ",") + g;
      env["CUDA_VISIBLE_DEVICES"] = list;
    }
    const GpuAssignment a = AssignGpu("auto", DetectVisibleGpus(Fake(env)), index, workers_on[task.node]);
    EXPECT_EQ(a.note, "") << node.name;
    devices.push_back(node.name + ":" + a.device);
  }
  return devices;
}

std::vector<std::string> Indices(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// Every GPU of every node is given to exactly one worker, and the coordinator gets none.
void ExpectEachGpuOnce(const std::vector<Node>& nodes) {
  const std::vector<std::string> devices = SimulateJob(nodes);
  EXPECT_EQ(devices.front(), "");
  std::multiset<std::string> used(devices.begin() + 1, devices.end());
  std::multiset<std::string> expected;
  for (const Node& node : nodes) {
    for (const std::string& g : node.gpus) expected.insert(node.name + ":" + g);
  }
  EXPECT_EQ(used, expected);
}

TEST(SlurmGpuBinding, TwoNodesWithFourGpusEach) {
  ExpectEachGpuOnce({{"n1", Indices(4)}, {"n2", Indices(4)}});
  const std::vector<std::string> devices = SimulateJob({{"n1", Indices(4)}, {"n2", Indices(4)}});
  EXPECT_EQ(devices, (std::vector<std::string>{"", "n1:0", "n1:1", "n1:2", "n1:3", "n2:0", "n2:1", "n2:2", "n2:3"}));
}

TEST(SlurmGpuBinding, FourNodesWithEightGpusEach) {
  ExpectEachGpuOnce({{"a", Indices(8)}, {"b", Indices(8)}, {"c", Indices(8)}, {"d", Indices(8)}});
}

TEST(SlurmGpuBinding, UnevenNodesAndSlurmsOwnIndexLists) {
  // --gpus=14 spread by Slurm: 8, 4 and 2 GPUs; on the last node Slurm handed out devices 4 and 6.
  ExpectEachGpuOnce({{"a", Indices(8)}, {"b", Indices(4)}, {"c", {"4", "6"}}});
  ExpectEachGpuOnce({{"a", {"1"}}, {"b", Indices(8)}});  // a one-GPU first node
}

TEST(SlurmGpuBinding, UuidListsAndPerTaskBinding) {
  ExpectEachGpuOnce({{"a", {"GPU-1b2c", "GPU-3d4e", "GPU-5f60", "GPU-7182"}},
                     {"b", {"GPU-93a4", "GPU-b5c6", "GPU-d7e8", "GPU-f90a"}}});
  ExpectEachGpuOnce({{"a", Indices(4), true}, {"b", Indices(4), true}});  // srun --gpus-per-task=1
  ExpectEachGpuOnce({{"a", {"MIG-aa11", "MIG-bb22"}}});
}

}  // namespace
}  // namespace cleansweep
