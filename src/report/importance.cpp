#include "report/importance.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "util/random.hpp"

namespace cleansweep {
namespace {

// Where a value lies on its parameter's [0, 1] axis.
double Normalised(const ParamSpec& spec, const ParamValue& value) {
  if (spec.kind == ParamKind::kCategorical) {
    const auto it = std::find_if(spec.choices.begin(), spec.choices.end(),
                                 [&value](const ParamValue& c) { return ValuesEqual(c, value); });
    const auto index = static_cast<double>(it - spec.choices.begin());
    return (index + 0.5) / static_cast<double>(spec.choices.size());
  }
  const double v = AsNumber(value);
  const auto at = [&spec](double x) { return spec.log ? std::log(x) : x; };
  if (spec.high <= spec.low) return 0.5;
  return std::clamp((at(v) - at(spec.low)) / (at(spec.high) - at(spec.low)), 0.0, 1.0);
}

struct Box {
  std::vector<double> low, high;  // per feature, within [0, 1]
};

struct Leaf {
  Box box;
  double value = 0;
};

// One regression tree, grown on rows `rows` of x (row-major, `d` features) and y, by variance
// reduction over midpoints between distinct feature values; only its leaves are kept.
class TreeBuilder {
 public:
  TreeBuilder(const std::vector<std::vector<double>>& x, const std::vector<double>& y, const ForestOptions& o)
      : x_(x), y_(y), options_(o) {}

  std::vector<Leaf> Grow(std::vector<size_t> rows) {
    leaves_.clear();
    const size_t d = x_.front().size();
    Split(rows, Box{std::vector<double>(d, 0.0), std::vector<double>(d, 1.0)}, 0);
    return std::move(leaves_);
  }

 private:
  void Split(std::vector<size_t>& rows, Box box, int depth) {
    double mean = 0;
    for (size_t r : rows) mean += y_[r];
    mean /= static_cast<double>(rows.size());
    const auto min_leaf = static_cast<size_t>(std::max(1, options_.min_samples_leaf));
    size_t best_feature = 0;
    double best_threshold = 0, best_score = 0;  // variance reduction (times n); 0 means no split
    if (depth < options_.max_depth && rows.size() >= 2 * min_leaf) {
      double total_sq = 0;
      for (size_t r : rows) total_sq += (y_[r] - mean) * (y_[r] - mean);
      if (total_sq > 0) {
        std::vector<std::pair<double, double>> column(rows.size());
        for (size_t f = 0; f < box.low.size(); ++f) {
          for (size_t i = 0; i < rows.size(); ++i) column[i] = {x_[rows[i]][f], y_[rows[i]]};
          std::sort(column.begin(), column.end());
          double left_sum = 0, right_sum = 0;
          for (const auto& c : column) right_sum += c.second;
          const auto n = static_cast<double>(column.size());
          for (size_t i = 0; i + 1 < column.size(); ++i) {
            left_sum += column[i].second;
            right_sum -= column[i].second;
            if (i + 1 < min_leaf || column.size() - i - 1 < min_leaf) continue;
            if (column[i].first == column[i + 1].first) continue;
            const auto nl = static_cast<double>(i + 1), nr = n - nl;
            // Between-group sum of squares: the reduction in within-group variance.
            const double score = left_sum * left_sum / nl + right_sum * right_sum / nr -
                                 (left_sum + right_sum) * (left_sum + right_sum) / n;
            if (score > best_score * (1 + 1e-12)) {
              best_score = score;
              best_feature = f;
              best_threshold = 0.5 * (column[i].first + column[i + 1].first);
            }
          }
        }
      }
    }
    if (best_score <= 0) {
      leaves_.push_back({std::move(box), mean});
      return;
    }
    std::vector<size_t> left, right;
    for (size_t r : rows) (x_[r][best_feature] <= best_threshold ? left : right).push_back(r);
    rows.clear();
    rows.shrink_to_fit();
    Box left_box = box, right_box = std::move(box);
    left_box.high[best_feature] = best_threshold;
    right_box.low[best_feature] = best_threshold;
    Split(left, std::move(left_box), depth + 1);
    Split(right, std::move(right_box), depth + 1);
  }

  const std::vector<std::vector<double>>& x_;
  const std::vector<double>& y_;
  ForestOptions options_;
  std::vector<Leaf> leaves_;
};

// The share of one tree's variance over [0, 1]^d that each feature explains alone; empty when the
// tree is constant.
std::vector<double> TreeShares(const std::vector<Leaf>& leaves, size_t d) {
  double mean = 0, second = 0;
  for (const Leaf& leaf : leaves) {
    double volume = 1;
    for (size_t f = 0; f < d; ++f) volume *= leaf.box.high[f] - leaf.box.low[f];
    mean += leaf.value * volume;
    second += leaf.value * leaf.value * volume;
  }
  const double total = second - mean * mean;
  if (total <= 1e-300) return {};
  std::vector<double> shares(d, 0.0);
  for (size_t f = 0; f < d; ++f) {
    // The marginal a(x_f) = sum over leaves whose box covers x_f of value x the box's volume in
    // the other features: piecewise constant, accumulated over the leaves' edges.
    std::map<double, double> steps;  // edge -> change of a at that edge
    for (const Leaf& leaf : leaves) {
      double others = leaf.value;
      for (size_t g = 0; g < d; ++g) {
        if (g != f) others *= leaf.box.high[g] - leaf.box.low[g];
      }
      steps[leaf.box.low[f]] += others;
      steps[leaf.box.high[f]] -= others;
    }
    double level = 0, previous = 0, sum = 0, sum_sq = 0;
    for (const auto& [edge, change] : steps) {
      const double width = edge - previous;
      sum += level * width;
      sum_sq += level * level * width;
      level += change;
      previous = edge;
    }
    shares[f] = std::max(0.0, sum_sq - sum * sum) / total;
  }
  return shares;
}

}  // namespace

ImportanceResult FanovaImportance(const StudyConfig& config, const std::vector<TrialRecord>& trials,
                                  const ForestOptions& options) {
  ImportanceResult result;
  std::vector<const TrialRecord*> done;
  for (const TrialRecord& r : trials) {
    if (r.state == TrialState::kComplete && r.value && std::isfinite(*r.value)) done.push_back(&r);
  }
  if (static_cast<std::int64_t>(done.size()) > options.max_trials) {
    done.erase(done.begin(), done.end() - options.max_trials);
  }
  std::vector<const ParamSpec*> features;
  for (const ParamSpec& spec : config.space.params()) {
    if (spec.kind == ParamKind::kFixed) {
      result.skipped.push_back(spec.name + ": fixed");
      continue;
    }
    const bool everywhere =
        std::all_of(done.begin(), done.end(), [&](const TrialRecord* r) { return r->params.count(spec.name) > 0; });
    if (!everywhere) {
      result.skipped.push_back(spec.name + ": conditional (inactive in some trials)");
      continue;
    }
    features.push_back(&spec);
  }
  result.trials_used = static_cast<std::int64_t>(done.size());
  if (done.size() < 4) {
    result.note = "needs at least 4 completed trials (has " + std::to_string(done.size()) + ")";
    return result;
  }
  if (features.empty()) {
    result.note = "no parameter is active in every completed trial";
    return result;
  }
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const TrialRecord* r : done) {
    std::vector<double> row;
    for (const ParamSpec* spec : features) row.push_back(Normalised(*spec, r->params.at(spec->name)));
    x.push_back(std::move(row));
    y.push_back(*r->value);
  }
  TreeBuilder builder(x, y, options);
  SplitMix64 rng(options.seed ^ 0x6a09e667f3bcc909ULL);
  std::vector<double> mean_shares(features.size(), 0.0);
  int counted = 0;
  for (int t = 0; t < options.trees; ++t) {
    std::vector<size_t> rows(x.size());
    for (size_t& r : rows) r = static_cast<size_t>(rng.Below(x.size()));  // bootstrap sample
    const std::vector<double> shares = TreeShares(builder.Grow(std::move(rows)), features.size());
    if (shares.empty()) continue;
    for (size_t f = 0; f < shares.size(); ++f) mean_shares[f] += shares[f];
    ++counted;
  }
  const double total = std::accumulate(mean_shares.begin(), mean_shares.end(), 0.0);
  if (counted == 0 || total <= 0) {
    result.note = "the objective does not vary with the parameters";
    return result;
  }
  for (size_t f = 0; f < features.size(); ++f) result.params.push_back({features[f]->name, mean_shares[f] / total});
  std::stable_sort(result.params.begin(), result.params.end(),
                   [](const ParamImportance& a, const ParamImportance& b) { return a.importance > b.importance; });
  return result;
}

}  // namespace cleansweep
