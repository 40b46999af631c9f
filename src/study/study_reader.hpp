// Internal to src/study: the reading half of ReadStudyFile (study_file.hpp), which runs it in a
// forked child (guarded_reader.cpp), and the one message both give for a damaged file.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "study/study_file.hpp"

namespace cleansweep {

// Reads `path` in this process. HDF5 trusts what it reads from a file's raw data (a variable-
// length string's length and heap address are not checksummed), so a damaged file can make this
// crash or allocate without bound: call it only where that cannot hurt (the child ReadStudyFile forks).
Result<StudyData> ReadStudyFileInProcess(const std::string& path);

// InvalidInput "PATH: the study file is damaged: WHAT; use another copy …" (a `what` that starts
// with the path has it removed). ReadStudyFile (guarded_reader.cpp) says the same when the
// reading child crashes or runs out of time.
Status DamagedStudy(const std::string& path, std::string what);

// How long ReadStudyFile's child may take. `computing`: its own processor time; a damaged file can
// send HDF5 round a loop for ever, so at this much the child is killed and the file called
// damaged. `waiting`: the clock; a busy machine gives the child little of the processor, and a
// read still unfinished after this long is given up as too slow (an IoError), not called damaged.
struct ReadLimits {
  std::chrono::milliseconds computing;
  std::chrono::milliseconds waiting;
};

// What ReadStudyFile does, with `read` run in the child in place of ReadStudyFileInProcess (tests).
Result<StudyData> ReadStudyFileGuarded(const std::string& path, const ReadLimits& limits,
                                       const std::function<Result<StudyData>(const std::string&)>& read);

}  // namespace cleansweep
