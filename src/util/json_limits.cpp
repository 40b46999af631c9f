#include "util/json_limits.hpp"

#include <string>

namespace cleansweep {

Status CheckJsonDepth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Status::InvalidInput("JSON nested deeper than " + std::to_string(max_depth) + " levels (at byte " +
                                    std::to_string(i) + ")");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status::Ok();
}

Result<nlohmann::json> ParseUntrustedJson(std::string_view text, int max_depth) {
  CS_RETURN_IF_ERROR(CheckJsonDepth(text, max_depth));
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidInput(std::string("not JSON: ") + e.what());
  }
}

}  // namespace cleansweep
