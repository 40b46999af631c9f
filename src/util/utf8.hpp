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

// `text` as one line that a terminal shows as text: control characters (C0, DEL and the C1 range
// U+0080-U+009F, which start a terminal's escape sequences) and the bidirectional controls
// (U+202A-U+202E, U+2066-U+2069) are written as escapes ("\n", "\t", "\x1b", "\u009b",
// "\u202e"), and invalid bytes as U+FFFD. For a trial's words printed to a terminal: raw,
// they could clear the screen, retitle the window, or forge a line of our output.
std::string ForTerminal(std::string_view text);

}  // namespace cleansweep
