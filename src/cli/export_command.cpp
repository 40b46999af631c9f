#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "study/export.hpp"
#include "util/output_file.hpp"

namespace cleansweep {

int ExportCommand(const ExportArgs& args) {
  const bool to_stdout = args.output.empty() || args.output == "-";
  if (!to_stdout) {
    const Status usable = CheckOutputPath(args.output, {args.study}, "the export");
    if (!usable.ok()) return PrintError(usable);
  }
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return PrintError(study.status());
  std::ostringstream text;
  if (args.format == "json") {
    WriteJson(*study, text);
  } else {
    const CsvShape shape = WriteCsv(*study, text);
    if (shape.attr_columns < shape.attr_names) {
      std::cerr << "cleansweep: note: the trials hold " << shape.attr_names << " distinct attrs, more than the "
                << shape.attr_columns << " columns export makes: attr_* holds those most trials have, attrs_other "
                << "each trial's others as JSON (--format json keeps every one by name)\n";
    }
  }
  if (to_stdout) {
    std::cout << text.str();
    return std::cout.flush() ? kExitOk : PrintError(Status::IoError("cannot write the export to standard output"));
  }
  // A temporary file renamed into place: a reader never sees half an export, a failure leaves none.
  const Status written = WriteFileAtomically(args.output, text.str());
  return written.ok() ? kExitOk : PrintError(written);
}

}  // namespace cleansweep
