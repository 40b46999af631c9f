// Doubles as text that reads back to the same double: the shortest such digits (std::to_chars),
// used wherever a parameter or value leaves the process (command placeholders, the CSV and JSON
// exports, the study file's text columns), so a trial runs with exactly the value the study stores.
#pragma once

#include <string>

namespace cleansweep {

// "0.1", "1e-05", "0.6524484863740322", "3.0", "1e+16", "nan", "inf", "-inf" (Python's repr()).
std::string FormatDouble(double value);

}  // namespace cleansweep
