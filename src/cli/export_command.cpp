#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "study/export.hpp"

namespace cleansweep {

int ExportCommand(const ExportArgs& args) {
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return ReportError(study.status());
  const auto write = [&](std::ostream& out) {
    if (args.format == "json") {
      WriteJson(*study, out);
    } else {
      WriteCsv(*study, out);
    }
  };
  if (args.output.empty() || args.output == "-") {
    write(std::cout);
    return std::cout.good() ? kExitOk : kExitFailure;
  }
  // Write beside the target and rename, so a reader never sees half a file.
  const std::string partial = args.output + ".partial";
  {
    std::ofstream out(partial);
    if (!out) return ReportError(Status::IoError(partial + ": cannot write: " + std::strerror(errno)));
    write(out);
    if (!out.flush()) return ReportError(Status::IoError(partial + ": write failed: " + std::strerror(errno)));
  }
  std::error_code ec;
  std::filesystem::rename(partial, args.output, ec);
  if (ec) return ReportError(Status::IoError(args.output + ": " + ec.message()));
  return kExitOk;
}

}  // namespace cleansweep
