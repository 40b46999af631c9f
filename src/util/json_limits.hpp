// Bounds for JSON that comes from outside our process (trial reports, the study file's attrs,
// the fork-server protocol). nlohmann::json parses iteratively, but copying, comparing and
// dumping a value recurse once per level, so a document nested 100,000 deep would overflow the
// stack long after it was parsed. Depth is checked on the text, before anything is built.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "util/status.hpp"

namespace cleansweep {

// Deeper than this is refused everywhere we read untrusted JSON; real attrs are a few levels.
inline constexpr int kMaxJsonDepth = 64;

// InvalidInput when arrays/objects in `text` nest deeper than `max_depth` (strings are skipped
// correctly, escapes included). Linear in the text, no allocation, no recursion.
Status CheckJsonDepth(std::string_view text, int max_depth = kMaxJsonDepth);

// Parses `text` as JSON after CheckJsonDepth; InvalidInput (with the parser's reason) when it is
// too deep or not JSON. Never throws.
Result<nlohmann::json> ParseUntrustedJson(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace cleansweep
