// One trial, one outcome: the results of a gang trial's processes (one per worker) made into the
// trial's record (docs/multi-gpu.md, "Failures").
#pragma once

#include <map>
#include <vector>

#include "trial/trial_record.hpp"

namespace cleansweep {

// `ranks`: the gang's workers, its rank 0's first; `ended`: each one's result, by worker rank
// (every rank has one). The record is rank 0's (value, reports, attributes) with:
//  - the state of the process that failed first (the earliest to end in a state other than
//    COMPLETE, INTERRUPTED and PRUNED, which the coordinator causes; and before rank 0 completed,
//    if it did), its reason prefixed with its RANK, worker and host, its exit code, signal and
//    output; rank 0's state when none failed;
//  - the gang's span of time; memory, CPU and GPU time and energy summed over its processes, and
//    the largest process's memory; `gpus`, `workers` and `gpu` naming every worker it held.
TrialRecord MergeGang(const std::vector<int>& ranks, const std::map<int, TrialRecord>& ended);

// Worker ranks as short text, runs joined: {1, 2, 3, 4, 9} -> "1-4,9".
std::string FormatRanks(const std::vector<int>& ranks);

}  // namespace cleansweep
