#include "util/number_format.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

TEST(FormatDouble, ReadsBackToTheSameDouble) {
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 100000; ++i) {
    const double x = i % 2 ? unit(rng) : std::exp(unit(rng) * 80 - 40) * (i % 3 ? 1 : -1);
    const std::string text = FormatDouble(x);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
  }
}

// Issue 15: {x} in a command printed 10 digits, so the trial ran with 0.6524484864 while the
// study stored 0.6524484863740322.
TEST(FormatDouble, IsTheShortestExactTextLaidOutLikePython) {
  EXPECT_EQ(FormatDouble(0.6524484863740322), "0.6524484863740322");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(1e-5), "1e-05");
  EXPECT_EQ(FormatDouble(3.0), "3.0");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatDouble(123456.75), "123456.75");
  EXPECT_EQ(FormatDouble(1e16), "1e+16");
  EXPECT_EQ(FormatDouble(1.5e300), "1.5e+300");
  EXPECT_EQ(FormatDouble(0.0), "0.0");
}

}  // namespace
}  // namespace cleansweep
