// Fuzz target: reading a study file (every reader goes through ReadStudyFile). The input is the
// file's bytes; what is checked is that reading ends, in this process, with a study or a Status:
// whatever the bytes do to HDF5 must stay inside the guarded reader's child.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "study/study_file.hpp"
#include "util/unique_fd.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp ? tmp : "/tmp") + "/cleansweep-fuzz-" + std::to_string(::getpid()) + ".h5";
  }();
  {
    cleansweep::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid() || !cleansweep::WriteAll(fd.get(), reinterpret_cast<const char*>(data), size)) std::abort();
  }
  cleansweep::Result<cleansweep::StudyData> study = cleansweep::ReadStudyFile(path);
  if (study.ok()) {
    for (const cleansweep::TrialRecord& r : study->trials) (void)r.attrs_json.size();
  }
  ::unlink(path.c_str());
  return 0;
}
