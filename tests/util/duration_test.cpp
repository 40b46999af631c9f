#include "util/duration.hpp"

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

TEST(ParseDuration, AcceptsUnitsAndCompounds) {
  EXPECT_EQ(ParseDuration("90s")->count(), 90'000);
  EXPECT_EQ(ParseDuration("10m")->count(), 600'000);
  EXPECT_EQ(ParseDuration("2h")->count(), 7'200'000);
  EXPECT_EQ(ParseDuration("1h30m")->count(), 5'400'000);
  EXPECT_EQ(ParseDuration("250ms")->count(), 250);
  EXPECT_EQ(ParseDuration("1.5s")->count(), 1'500);
  EXPECT_EQ(ParseDuration("45")->count(), 45'000);
  EXPECT_EQ(ParseDuration("1d")->count(), 86'400'000);
}

TEST(ParseDuration, RejectsGarbage) {
  for (const char* bad : {"", "m", "10x", "-5s", "5 s", "10s5", "abc"}) {
    const Result<Millis> d = ParseDuration(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.status().message().find("not a duration"), std::string::npos);
  }
}

// Issue 15: "99999999999999999h" overflowed into a negative timeout (every trial TIMEOUT "after
// -9223372036854775808ms").
TEST(ParseDuration, RefusesDurationsPastTenYearsInsteadOfOverflowing) {
  for (const char* huge : {"99999999999999999h", "3651d", "9999999999999999999999999999s", "87601h"}) {
    const Result<Millis> d = ParseDuration(huge);
    ASSERT_FALSE(d.ok()) << huge;
    EXPECT_NE(d.status().message().find("longer than 3650d"), std::string::npos) << d.status().message();
  }
  EXPECT_EQ(ParseDuration("3650d")->count(), kMaxDuration.count());
}

TEST(FormatDuration, IsCompact) {
  EXPECT_EQ(FormatDuration(Millis(850)), "850ms");
  EXPECT_EQ(FormatDuration(Millis(42'000)), "42.0s");
  EXPECT_EQ(FormatDuration(Millis(185'000)), "3m05s");
  EXPECT_EQ(FormatDuration(Millis(7'800'000)), "2h10m");
}

}  // namespace
}  // namespace cleansweep

#include "util/byte_size.hpp"

namespace cleansweep {
namespace {

TEST(ParseByteSize, AcceptsBinaryUnitsInAnySpelling) {
  EXPECT_EQ(*ParseByteSize("2048"), 2048);
  EXPECT_EQ(*ParseByteSize("512M"), 512LL << 20);
  EXPECT_EQ(*ParseByteSize("512MiB"), 512LL << 20);
  EXPECT_EQ(*ParseByteSize("8g"), 8LL << 30);
  EXPECT_EQ(*ParseByteSize("1.5GB"), 3LL << 29);
  EXPECT_EQ(*ParseByteSize("2 T"), 2LL << 40);
  EXPECT_EQ(*ParseByteSize("100K"), 102400);
}

TEST(ParseByteSize, RejectsGarbage) {
  for (const char* bad : {"", "-1G", "0", "G", "12X", "8GiBs", "1e30T", "nan"}) {
    EXPECT_FALSE(ParseByteSize(bad).ok()) << bad;
  }
}

TEST(FormatByteSize, IsReadable) {
  EXPECT_EQ(FormatByteSize(256LL << 20), "256 MiB");
  EXPECT_EQ(FormatByteSize(3LL << 29), "1.5 GiB");
  EXPECT_EQ(FormatByteSize(100), "100 B");
}

}  // namespace
}  // namespace cleansweep
