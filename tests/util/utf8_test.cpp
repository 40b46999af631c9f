#include "util/utf8.hpp"

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

const std::string kEuro = "\xE2\x82\xAC";       // U+20AC, 3 bytes
const std::string kSmile = "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes

TEST(Utf8Prefix, NeverEndsInsideACharacter) {
  const std::string text = "ab" + kEuro + kSmile + "z";  // 2 + 3 + 4 + 1 bytes
  EXPECT_EQ(Utf8Prefix(text, 2), "ab");
  EXPECT_EQ(Utf8Prefix(text, 3), "ab");
  EXPECT_EQ(Utf8Prefix(text, 4), "ab");
  EXPECT_EQ(Utf8Prefix(text, 5), "ab" + kEuro);
  for (size_t n = 6; n < 9; ++n) EXPECT_EQ(Utf8Prefix(text, n), "ab" + kEuro) << n;
  EXPECT_EQ(Utf8Prefix(text, 9), "ab" + kEuro + kSmile);
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  for (size_t n = 0; n <= text.size(); ++n) EXPECT_TRUE(IsValidUtf8(Utf8Prefix(text, n))) << n;
}

TEST(Utf8Prefix, KeepsATrialsInvalidBytesButCutsByLength) {
  const std::string junk = "\xFF\xFE\x80\x80\x80\x80";
  EXPECT_EQ(Utf8Prefix(junk, 3), "\xFF\xFE\x80");
  EXPECT_LE(Utf8Prefix(junk, 3).size(), 3u);
}

TEST(IsValidUtf8, RefusesMalformedSequences) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8(kEuro + kSmile));
  for (const char* bad : {"\xC0\xAF",          // overlong '/'
                          "\xED\xA0\x80",      // a surrogate
                          "\xF4\x90\x80\x80",  // past U+10FFFF
                          "\xE2\x82",          // cut short
                          "\x80", "\xFF"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

TEST(ToValidUtf8, ReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(ToValidUtf8("a\xFF"
                        "b" +
                        kEuro),
            "a\xEF\xBF\xBD"
            "b" +
                kEuro);
  EXPECT_EQ(ToValidUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xC0\xAF\xED\xA0\x80 ok")));
}

// A trial's words on the user's terminal: escape sequences, line breaks and bidirectional
// overrides become visible escapes; every other character, any script, stays as it is.
TEST(ForTerminal, ShowsControlsAsEscapesAndKeepsTheText) {
  EXPECT_EQ(ForTerminal("\x1b[2J\x1b]0;owned\x07"
                        "RED\nfake: trial 99 COMPLETE"),
            "\\x1b[2J\\x1b]0;owned\\x07RED\\nfake: trial 99 COMPLETE");
  EXPECT_EQ(ForTerminal("tab\there\r\x7f"), "tab\\there\\r\\x7f");
  EXPECT_EQ(ForTerminal("\xC2\x9B"
                        "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(ForTerminal("a\xE2\x80\xAE"
                        "cba"),
            "a\\u202ecba");                             // right-to-left override
  EXPECT_EQ(ForTerminal("\xE2\x81\xA6x"), "\\u2066x");  // left-to-right isolate
  EXPECT_EQ(ForTerminal("bad \xFF byte"), "bad \xEF\xBF\xBD byte");
  const std::string text = "loss " + kEuro + " \xC2\xA0\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80 (x=0.5)";
  EXPECT_EQ(ForTerminal(text), text);  // no-break space, é, 日, an emoji: printable
  EXPECT_EQ(ForTerminal(std::string("nul\0byte", 8)), "nul\\x00byte");
}

}  // namespace
}  // namespace cleansweep
