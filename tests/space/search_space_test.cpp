#include "space/search_space.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace cleansweep {
namespace {

ParamSpec Float(const std::string& name, double low, double high, bool log = false) {
  ParamSpec spec;
  spec.name = name;
  spec.kind = ParamKind::kFloat;
  spec.low = low;
  spec.high = high;
  spec.log = log;
  return spec;
}

ParamSpec Int(const std::string& name, double low, double high, std::optional<double> step = std::nullopt) {
  ParamSpec spec = Float(name, low, high);
  spec.kind = ParamKind::kInt;
  spec.step = step;
  return spec;
}

TEST(SearchSpace, FromUnitCoversTheEndsOfAnIntRange) {
  const ParamSpec spec = Int("n", 1, 3);
  EXPECT_EQ(SearchSpace::FromUnit(spec, 0.0), ParamValue(std::int64_t{1}));
  EXPECT_EQ(SearchSpace::FromUnit(spec, 0.5), ParamValue(std::int64_t{2}));
  EXPECT_EQ(SearchSpace::FromUnit(spec, 0.999999), ParamValue(std::int64_t{3}));
}

TEST(SearchSpace, StepsSnapAndStayBelowHigh) {
  const ParamSpec spec = Int("c", 8, 60, 8.0);  // 8, 16, ..., 56: 60 is not on the grid
  for (double u = 0; u < 1; u += 0.01) {
    const auto v = std::get<std::int64_t>(SearchSpace::FromUnit(spec, u));
    EXPECT_EQ(v % 8, 0);
    EXPECT_GE(v, 8);
    EXPECT_LE(v, 56);
  }
  ParamSpec f = Float("f", 0, 1);
  f.step = 0.25;
  EXPECT_DOUBLE_EQ(std::get<double>(SearchSpace::FromUnit(f, 0.3)), 0.25);
}

TEST(SearchSpace, LogScaleMapsTheMidpointToTheGeometricMean) {
  const ParamSpec spec = Float("lr", 1e-4, 1e-2, true);
  EXPECT_NEAR(std::get<double>(SearchSpace::FromUnit(spec, 0.5)), 1e-3, 1e-12);
  EXPECT_NEAR(std::get<double>(SearchSpace::FromUnit(spec, 0.0)), 1e-4, 1e-15);
}

TEST(SearchSpace, ConditionsNeedTheParentActiveAndMatching) {
  ParamSpec child = Float("momentum", 0, 1);
  child.when = {{"optimizer", {ParamValue(std::string("sgd")), ParamValue(std::string("nag"))}}};
  EXPECT_FALSE(SearchSpace::IsActive(child, {}));
  EXPECT_FALSE(SearchSpace::IsActive(child, {{"optimizer", std::string("adam")}}));
  EXPECT_TRUE(SearchSpace::IsActive(child, {{"optimizer", std::string("nag")}}));
  ParamSpec numeric = Float("x", 0, 1);
  numeric.when = {{"blocks", {ParamValue(std::int64_t{2})}}};
  EXPECT_TRUE(SearchSpace::IsActive(numeric, {{"blocks", 2.0}}));  // int and float compare by value
}

TEST(SearchSpace, OrdersParentsBeforeChildren) {
  ParamSpec child = Float("momentum", 0, 1);
  child.when = {{"optimizer", {ParamValue(std::string("sgd"))}}};
  ParamSpec parent;
  parent.name = "optimizer";
  parent.kind = ParamKind::kCategorical;
  parent.choices = {std::string("sgd"), std::string("adam")};
  Result<SearchSpace> space = SearchSpace::Create({child, Float("lr", 0, 1), parent});
  ASSERT_TRUE(space.ok());
  std::vector<std::string> order;
  for (const ParamSpec& p : space->params()) order.push_back(p.name);
  EXPECT_EQ(order, (std::vector<std::string>{"optimizer", "momentum", "lr"}));
}

TEST(SearchSpace, RefusesUnknownParentsAndSelfReference) {
  ParamSpec child = Float("a", 0, 1);
  child.when = {{"missing", {ParamValue(true)}}};
  EXPECT_FALSE(SearchSpace::Create({child}).ok());
  child.when = {{"a", {ParamValue(true)}}};
  EXPECT_FALSE(SearchSpace::Create({child}).ok());
}

}  // namespace
}  // namespace cleansweep
