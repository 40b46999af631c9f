// Internal to src/study: the two halves of ReadStudyFile (study_file.hpp).
#pragma once

#include <string>

#include "study/study_file.hpp"

namespace cleansweep {

// Reads `path` in this process. HDF5 trusts what it reads from a file's raw data (a variable-
// length string's length and heap address are not checksummed), so a damaged file can make this
// crash or allocate without bound: call it only where that cannot hurt (the guarded child below).
Result<StudyData> ReadStudyFileInProcess(const std::string& path);

// Runs ReadStudyFileInProcess in a forked child with a memory limit and a deadline, and takes
// its result back through a pipe. A child that crashes, runs out of memory or time means the file
// is damaged: InvalidInput naming the path, within 5 s (plus a second per 32 MB of file).
Result<StudyData> ReadStudyFileGuarded(const std::string& path);

}  // namespace cleansweep
