// Writing a study as CSV or JSON, for spreadsheets, pandas.read_csv and other tools.
#pragma once

#include <cstddef>
#include <ostream>

#include "study/study_file.hpp"

namespace cleansweep {

// At most this many attr_<name> columns: a trial may hold 1,000 attributes, and trials that each
// name their own would otherwise make the CSV grow with trials times attributes.
inline constexpr size_t kMaxAttrColumns = 1000;

struct CsvShape {
  size_t attr_names = 0;    // distinct attribute names among the trials
  size_t attr_columns = 0;  // of them, with a column of their own
};

// Columns: number,state,value, param_<name> per parameter (space order), attr_<name> per user
// attribute (sorted; with more than kMaxAttrColumns names, those most trials hold, and then
// attrs_other: each trial's other attributes as a JSON object), then
// datetime_start,datetime_end,duration,worker,host,gpu,exit_code,signal,
// peak_rss_kb,attempt,retry_of,enqueued,sampler_ms,last_step, the four gpu_mem_* columns,
// datetime_worker_free,cpu_seconds,gpu_seconds,energy_j,reason,output_tail. Inactive parameters
// and missing values are empty cells. RFC 4180 quoting.
CsvShape WriteCsv(const StudyData& study, std::ostream& out);

// {"study": {...metadata...}, "trials": [...], "intermediate": [...]}
void WriteJson(const StudyData& study, std::ostream& out);

}  // namespace cleansweep
