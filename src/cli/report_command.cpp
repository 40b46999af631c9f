// `cleansweep report STUDY [-o OUT]`: the study as one self-contained HTML page.
#include <cstdio>

#include "cli/commands.hpp"
#include "report/report.hpp"
#include "util/output_file.hpp"

namespace cleansweep {

int ReportCommand(const ReportArgs& args) {
  const std::string out = args.output.empty() ? DefaultReportPath(args.study) : args.output;
  const Status usable = CheckOutputPath(out, {args.study}, "the report");
  if (!usable.ok()) return PrintError(usable);
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return PrintError(study.status());
  const Status written = WriteReportFile(out, RenderReport(ReportInputFrom(*study)));
  if (!written.ok()) return PrintError(written);
  std::printf("report: %s (%zu trials)\n", out.c_str(), study->trials.size());
  return kExitOk;
}

}  // namespace cleansweep
