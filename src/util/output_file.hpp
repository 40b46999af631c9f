// Files a command writes: never over one of its inputs, and never half-written.
#pragma once

#include <string>
#include <vector>

#include "util/status.hpp"

namespace cleansweep {

// InvalidInput when `output` is a folder, or is (by path, link or hard link) one of `inputs` or
// an input's lock file (INPUT.lock): `what` names the output in the message ("the export").
Status CheckOutputPath(const std::string& output, const std::vector<std::string>& inputs, const std::string& what);

// Writes `content` to a temporary file beside `path` (".NAME.partial-PID"), flushes it to disk
// and renames it over `path`: a reader sees the old file or the whole new one. On any failure the
// temporary file is removed and `path` is untouched.
Status WriteFileAtomically(const std::string& path, const std::string& content);

// Renames `from` to `to` unless something exists at `to`: then InvalidInput, naming `to`, and both
// are left as they are. Atomic where the file system can (renameat2's RENAME_NOREPLACE, else a
// hard link and the old name's removal); on one that can neither, `to` is checked and then `from`
// renamed, and a file made at `to` in between would be replaced.
Status RenameNoReplace(const std::string& from, const std::string& to);

}  // namespace cleansweep
