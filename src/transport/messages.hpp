// The messages between rank 0 and the workers. Each type has one Tag; the MPI transport sends the
// tag as the MPI tag and the cereal-serialized struct as the payload.
#pragma once

#include <string>
#include <variant>

#include "trial/trial_record.hpp"

namespace cleansweep {

enum class Tag : int {
  kHello = 1,     // worker -> coordinator: I am up
  kSetup,         // coordinator -> worker: the effective config and where trial folders go
  kReady,         // worker -> coordinator: set up (or why not), and the GPU it will use
  kAssign,        // coordinator -> worker: run this trial
  kStep,          // worker -> coordinator: an intermediate value of the running trial
  kResult,        // worker -> coordinator: the trial ended
  kStop,          // coordinator -> worker: interrupt any trial, then exit
  kPrune,         // coordinator -> worker: the running trial is pruned
  kCheckpoint,    // worker -> coordinator: the running trial declared a checkpoint
  kRelease,       // coordinator -> worker: a trial's older checkpoints may go (the newer one is durable)
  kAbort,         // coordinator -> worker: another process of this gang trial failed; stop ours
  kSuggest,       // worker -> coordinator: the running trial asks for a parameter the config does not declare
  kSuggestReply,  // coordinator -> worker: its value (recorded in the study file first), or why not
};

const char* TagName(Tag tag);

struct HelloMsg {
  std::string host;
  template <class A>
  void serialize(A& ar) {
    ar(host);
  }
};

struct SetupMsg {
  std::string config_yaml;
  std::string trials_root;  // each trial gets <trials_root>/<number>/
  template <class A>
  void serialize(A& ar) {
    ar(config_yaml, trials_root);
  }
};

struct ReadyMsg {
  bool ok = false;
  std::string error;       // why setup failed, when !ok
  std::string gpu;         // CUDA_VISIBLE_DEVICES for its trials; "" means CPU
  std::string isolation;   // how its trials are contained (cgroup or process group, memory limit)
  std::string gpu_source;  // where the worker's device list came from ("CUDA_VISIBLE_DEVICES=0,1")
  std::string gpu_note;    // a warning: GPUs shared or idle on its node
  // Gangs: where the other processes of a trial this worker leads reach its rank 0 (MASTER_ADDR),
  // and the port the worker holds for it (MASTER_PORT); "" and 0 when the study has no gangs.
  std::string address;
  int port = 0;
  template <class A>
  void serialize(A& ar) {
    ar(ok, error, gpu, isolation, gpu_source, gpu_note, address, port);
  }
};

// A worker's place in a trial that takes several workers (trial.gpus; docs/multi-gpu.md): what
// torch.distributed's env:// rendezvous and torchrun read. `size` 1 is an ordinary trial.
struct GangPlace {
  int size = 1;        // WORLD_SIZE: processes of the trial (per_gpu), or workers it holds (single)
  int rank = 0;        // RANK of this worker's process; 0 leads: its reports and value count
  int local_rank = 0;  // LOCAL_RANK: among the trial's processes on this node
  int local_size = 1;  // LOCAL_WORLD_SIZE
  int group_rank = 0;  // GROUP_RANK: this node's index among the trial's nodes
  int groups = 1;      // how many nodes the trial spans
  std::string master_addr;
  int master_port = 0;
  std::string gpus;  // single: every GPU of the gang, for the one process (CUDA_VISIBLE_DEVICES)
  bool single = false;
  template <class A>
  void serialize(A& ar) {
    ar(size, rank, local_rank, local_size, group_rank, groups, master_addr, master_port, gpus, single);
  }
};

struct AssignMsg {
  std::int64_t number = -1;
  ParamSet params;
  int attempt = 1;
  // A trial that goes on under its number from its checkpoint of this step (CLEANSWEEP_RESUME_STEP);
  // -1: it starts from the beginning.
  std::int64_t resume_step = -1;
  // Population-based training: the trial whose checkpoint of resume_step this one starts from
  // (the worker links it into the trial's own checkpoint folder first, unless that has it); -1: its own.
  std::int64_t parent = -1;
  GangPlace gang;
  template <class A>
  void serialize(A& ar) {
    ar(number, params, attempt, resume_step, parent, gang);
  }
};

struct StepMsg {
  IntermediateValue value;
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};

struct ResultMsg {
  TrialRecord record;
  // Set when the worker could not start the trial for a cause of its own (the trial folder or log
  // cannot be made, no fork): the trial never ran (INTERRUPTED), and the next would fare the same.
  std::string worker_fault;
  template <class A>
  void serialize(A& ar) {
    ar(record, worker_fault);
  }
};

// Stop after the running trial: it may go on for `grace_ms` (and ends normally if it finishes),
// then it is stopped and recorded INTERRUPTED. `immediate`: kill it now, no grace of any kind.
struct StopMsg {
  std::string reason;
  std::int64_t grace_ms = 0;
  bool immediate = false;
  template <class A>
  void serialize(A& ar) {
    ar(reason, grace_ms, immediate);
  }
};

struct PruneMsg {
  std::int64_t number = -1;
  std::string reason;
  template <class A>
  void serialize(A& ar) {
    ar(number, reason);
  }
};

struct CheckpointMsg {
  std::int64_t number = -1;
  std::int64_t step = -1;
  template <class A>
  void serialize(A& ar) {
    ar(number, step);
  }
};

// Sent once the study file holds what makes them useless: a trial's checkpoints of steps before
// `before` may be removed (trial.checkpoint_keep). Never earlier: a job killed in between would go
// on from a checkpoint that is gone.
struct ReleaseMsg {
  std::int64_t number = -1;
  std::int64_t before = 0;
  template <class A>
  void serialize(A& ar) {
    ar(number, before);
  }
};

// One process of a gang trial failed (or its rank 0 finished): the others stop. Ours may end by
// itself within `grace_ms`, then it is stopped as trial.kill_grace says; its outcome does not
// decide the trial's.
struct AbortMsg {
  std::int64_t number = -1;
  std::string reason;
  std::int64_t grace_ms = 0;
  template <class A>
  void serialize(A& ar) {
    ar(number, reason, grace_ms);
  }
};

// Define-by-run (docs/trial-protocol.md): trial `number` asks for `name` with `distribution`
// (DistributionJson). The worker sends it only for a name the config does not declare, one at a
// time per trial; rank 0 draws the value, records it, and answers with SuggestReplyMsg.
struct SuggestMsg {
  std::int64_t number = -1;
  std::string name;
  std::string distribution;
  template <class A>
  void serialize(A& ar) {
    ar(number, name, distribution);
  }
};

// The value as JSON text (`0.0012`, `"adam"`), durable in the study file before this is sent; or,
// with `error` set, why the trial cannot have it (it then fails with that protocol error).
struct SuggestReplyMsg {
  std::int64_t number = -1;
  std::string name;
  std::string value_json;
  std::string error;
  template <class A>
  void serialize(A& ar) {
    ar(number, name, value_json, error);
  }
};

using Message = std::variant<HelloMsg, SetupMsg, ReadyMsg, AssignMsg, StepMsg, ResultMsg, StopMsg, PruneMsg,
                             CheckpointMsg, ReleaseMsg, AbortMsg, SuggestMsg, SuggestReplyMsg>;

Tag TagOf(const Message& message);
std::string Encode(const Message& message);
// RuntimeError on an unknown tag or a payload that does not decode.
Result<Message> Decode(int tag, const std::string& payload);

}  // namespace cleansweep
