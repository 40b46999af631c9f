// UTF-8 safety for text that comes from trials, files and users: every place that shortens such
// text cuts it here, so a cut never splits a character, and invalid bytes can be made printable.
#pragma once

#include <string>
#include <string_view>

namespace cleansweep {

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence. Invalid bytes before the cut are kept as they are (they are the trial's).
std::string Utf8Prefix(std::string_view text, size_t max_bytes);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
std::string ToValidUtf8(std::string_view text);

}  // namespace cleansweep
