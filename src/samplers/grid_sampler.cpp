#include "samplers/grid_sampler.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include <nlohmann/json.hpp>

#include "space/trial_defined.hpp"
#include "util/random.hpp"

namespace cleansweep {
namespace {

constexpr size_t kMaxGridPoints = 1'000'000;
constexpr double kMaxIntValues = 1000;

std::string Key(const ParamSet& params) { return ToJson(params).dump(); }

// Twelve significant digits: a log grid shows 0.01, not 0.010000000000000002.
double Round12(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return std::strtod(buf, nullptr);
}

}  // namespace

Result<std::vector<ParamValue>> GridSampler::GridValues(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::kCategorical:
      return spec.choices;
    case ParamKind::kFixed:
      return std::vector<ParamValue>{spec.fixed_value};
    case ParamKind::kFloat:
    case ParamKind::kInt:
      break;
  }
  if (!spec.grid.empty()) return spec.grid;
  std::vector<ParamValue> values;
  const auto push = [&](double x) {
    const ParamValue v =
        spec.kind == ParamKind::kInt ? ParamValue(static_cast<std::int64_t>(std::llround(x))) : ParamValue(x);
    if (values.empty() || !ValuesEqual(values.back(), v)) values.push_back(v);
  };
  if (spec.grid_points > 0) {
    for (int i = 0; i < spec.grid_points; ++i) {
      const double t = i / static_cast<double>(spec.grid_points - 1);
      const double x = spec.log ? std::exp(std::log(spec.low) + t * (std::log(spec.high) - std::log(spec.low)))
                                : spec.low + t * (spec.high - spec.low);
      push(Round12(SearchSpace::Snap(spec, x)));
    }
    return values;
  }
  const double step = spec.step.value_or(1.0);
  if (spec.kind == ParamKind::kInt && (spec.high - spec.low) / step < kMaxIntValues) {
    for (double x = spec.low; x <= spec.high; x += step) push(x);
    return values;
  }
  return Status::InvalidInput(
      std::string("the grid sampler needs `grid: [...]` or `grid_points: N` for ") +
      (spec.kind == ParamKind::kInt ? "an int parameter with this many values" : "a float parameter"));
}

Result<std::unique_ptr<GridSampler>> GridSampler::Create(const SearchSpace& space, const std::string& source,
                                                         std::uint64_t seed, const Shard& shard,
                                                         const std::vector<ParamSet>& enqueued) {
  std::vector<std::vector<ParamValue>> values;
  for (const ParamSpec& spec : space.params()) {
    Result<std::vector<ParamValue>> v = GridValues(spec);
    if (!v.ok()) {
      return Status::InvalidInput(source + ":" + std::to_string(spec.line) + ": space." + spec.name + ": " +
                                  v.status().message());
    }
    values.push_back(std::move(*v));
  }
  auto sampler = std::make_unique<GridSampler>();
  ParamSet partial;
  bool too_large = false;
  // Depth-first product; an inactive parameter contributes no branching.
  std::function<void(size_t)> expand = [&](size_t i) {
    if (too_large) return;
    if (i == values.size()) {
      sampler->points_.push_back(partial);
      too_large = sampler->points_.size() > kMaxGridPoints;
      return;
    }
    const ParamSpec& spec = space.params()[i];
    if (!SearchSpace::IsActive(spec, partial)) return expand(i + 1);
    for (const ParamValue& v : values[i]) {
      partial[spec.name] = v;
      expand(i + 1);
    }
    partial.erase(spec.name);
  };
  expand(0);
  if (too_large) {
    return Status::InvalidInput(source + ": space: the grid has more than " + std::to_string(kMaxGridPoints) +
                                " points; use fewer grid values or the random sampler");
  }
  SplitMix64 rng(seed);  // Fisher-Yates with our own generator: the same order on every platform
  for (size_t i = sampler->points_.size(); i > 1; --i) {
    std::swap(sampler->points_[i - 1], sampler->points_[rng.Below(i)]);
  }
  sampler->capacity_ = static_cast<std::int64_t>(sampler->points_.size());
  if (shard.sharded()) {
    std::set<std::string> enqueued_keys;
    for (const ParamSet& params : enqueued) enqueued_keys.insert(Key(params));
    std::vector<ParamSet> mine;
    auto position = static_cast<std::int64_t>(enqueued.size());  // the grid's first point follows the queue
    for (ParamSet& point : sampler->points_) {
      if (enqueued_keys.count(Key(point))) continue;
      if (InShard(shard, position++)) mine.push_back(std::move(point));
    }
    sampler->points_ = std::move(mine);
  }
  return sampler;
}

std::optional<ParamSet> GridSampler::Ask(std::int64_t /*number*/, const TrialHistory& history) {
  for (; history_seen_ < history.finished.size(); ++history_seen_) {
    used_.insert(Key(history.finished[history_seen_].params));
  }
  for (const auto& [number, params] : history.running) used_.insert(Key(params));
  while (next_ < points_.size()) {
    const ParamSet& point = points_[next_++];
    if (used_.insert(Key(point)).second) return point;
  }
  return std::nullopt;
}

Result<ParamValue> GridSampler::SuggestTrialDefined(std::int64_t /*number*/, const ParamSpec& spec,
                                                    const ParamSet& /*asked*/, const TrialHistory& /*history*/) {
  return Status::InvalidInput("the trial asked for '" + spec.name + "' (" + DescribeDistribution(spec) +
                              "), which the config does not declare, and the grid sampler searches only the grid " +
                              "it declares: add '" + spec.name + "' to space: with its grid points, or use another " +
                              "sampler");
}

}  // namespace cleansweep
