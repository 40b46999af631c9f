#include "util/utf8.hpp"

namespace cleansweep {
namespace {

// Bytes of the well-formed sequence starting at text[pos], or 0 when none starts there.
size_t SequenceLength(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  if (byte(pos + 1) < low || byte(pos + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
bool IsBidiControl(std::string_view sequence) {
  if (sequence.size() != 3 || static_cast<unsigned char>(sequence[0]) != 0xE2) return false;
  const auto b1 = static_cast<unsigned char>(sequence[1]), b2 = static_cast<unsigned char>(sequence[2]);
  return (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
}

}  // namespace

std::string Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Step back over continuation bytes to the lead byte of the character the cut falls in; keep
  // that character only when it ends before the cut.
  size_t lead = cut;
  while (lead > 0 && cut - lead < 4 && IsContinuation(static_cast<unsigned char>(text[lead]))) --lead;
  if (lead < cut && SequenceLength(text, lead) > cut - lead) cut = lead;
  return std::string(text.substr(0, cut));
}

bool IsValidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = SequenceLength(text, pos);
    if (length == 0) return false;
    pos += length;
  }
  return true;
}

std::string ToValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = SequenceLength(text, pos);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++pos;
    } else {
      out.append(text.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

std::string ForTerminal(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = SequenceLength(text, pos);
    const auto c = static_cast<unsigned char>(text[pos]);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++pos;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 0xF];
    } else if (c == 0xC2 && static_cast<unsigned char>(text[pos + 1]) < 0xA0) {  // U+0080-U+009F
      const auto code = static_cast<unsigned char>(text[pos + 1]);
      out += std::string("\\u00") + kHex[code >> 4] + kHex[code & 0xF];
    } else if (IsBidiControl(text.substr(pos, length))) {  // would reorder the rest of the line
      const unsigned code = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(text[pos + 1]) & 0x3Fu) << 6) |
                            (static_cast<unsigned char>(text[pos + 2]) & 0x3Fu);
      out +=
          std::string("\\u") + kHex[code >> 12] + kHex[(code >> 8) & 0xF] + kHex[(code >> 4) & 0xF] + kHex[code & 0xF];
    } else {
      out.append(text.substr(pos, length));
    }
    pos += length;
  }
  return out;
}

}  // namespace cleansweep
