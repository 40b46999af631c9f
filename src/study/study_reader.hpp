// Internal to src/study: the reading half of ReadStudyFile (study_file.hpp), which runs it in a
// forked child (guarded_reader.cpp), and the one message both give for a damaged file.
#pragma once

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

}  // namespace cleansweep
