// `cleansweep report STUDY [-o OUT]`: the study as one self-contained HTML page.
#include <cstdio>

#include "cli/commands.hpp"
#include "report/report.hpp"

namespace cleansweep {

int ReportCommand(const ReportArgs& args) {
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return ReportError(study.status());
  const std::string out = args.output.empty() ? DefaultReportPath(args.study) : args.output;
  const Status written = WriteReportFile(out, RenderReport(ReportInputFrom(*study)));
  if (!written.ok()) return ReportError(written);
  std::printf("report: %s (%zu trials)\n", out.c_str(), study->trials.size());
  return kExitOk;
}

}  // namespace cleansweep
