// Writing a study as CSV or JSON, for spreadsheets, pandas.read_csv and other tools.
#pragma once

#include <ostream>

#include "study/study_file.hpp"

namespace cleansweep {

// Columns: number,state,value, param_<name> per parameter (space order), attr_<name> per user
// attribute (sorted), then datetime_start,datetime_end,duration,worker,host,gpu,exit_code,signal,
// peak_rss_kb,attempt,retry_of,enqueued,sampler_ms,last_step, the four gpu_mem_* columns,
// datetime_worker_free,cpu_seconds,gpu_seconds,energy_j,reason,output_tail. Inactive parameters
// and missing values are empty cells. RFC 4180 quoting.
void WriteCsv(const StudyData& study, std::ostream& out);

// {"study": {...metadata...}, "trials": [...], "intermediate": [...]}
void WriteJson(const StudyData& study, std::ostream& out);

}  // namespace cleansweep
