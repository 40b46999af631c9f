#include "samplers/gp_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "samplers/box_lbfgs.hpp"
#include "samplers/random_sampler.hpp"
#include "samplers/tpe_sampler.hpp"
#include "space/trial_defined.hpp"

namespace cleansweep {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kRefitEveryTrialUpTo = 50;  // below this many observations the kernel is refitted each time
constexpr double kRefitGrowth = 1.1;      // then whenever the data have grown by a tenth
constexpr int kPerturbedPerIncumbent = 32;
constexpr int kIncumbents = 5;

// One bound of study.constraints: slack = (value - max) / scale or (min - value) / scale, <= 0 to meet it.
struct Bound {
  const Constraint* constraint;
  bool upper;
};

std::vector<Bound> BoundsOf(const StudyOptions& study) {
  std::vector<Bound> bounds;
  for (const Constraint& c : study.constraints) {
    if (c.max) bounds.push_back({&c, true});
    if (c.min) bounds.push_back({&c, false});
  }
  return bounds;
}

double Slack(const Bound& b, double v) {
  const double bound = b.upper ? *b.constraint->max : *b.constraint->min;
  return (b.upper ? v - bound : bound - v) / std::max(1.0, std::abs(bound));
}

// Indices into `values` (oldest first) the model keeps when there are more than `cap`: the best
// half of those before a window of the most recent ones, then the window; the window starts on
// a multiple of cap / 8, so between two moves of its start the kept set only grows at its end
// (and the model extends its factor instead of refactorising).
std::vector<size_t> Kept(const std::vector<double>& values, size_t cap) {
  std::vector<size_t> kept(values.size());
  std::iota(kept.begin(), kept.end(), 0);
  if (values.size() <= cap) return kept;
  const size_t chunk = std::max<size_t>(cap / 8, 1), recent = cap / 2;
  const size_t window = (values.size() - recent) / chunk * chunk;
  std::vector<size_t> older(window);
  std::iota(older.begin(), older.end(), 0);
  const size_t best = std::min(cap - recent, older.size());
  std::partial_sort(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(best), older.end(),
                    [&](size_t a, size_t b) { return values[a] < values[b] || (values[a] == values[b] && a < b); });
  older.resize(best);
  std::sort(older.begin(), older.end());
  kept = older;
  for (size_t i = window; i < values.size(); ++i) kept.push_back(i);
  return kept;
}

// The Yeo-Johnson power transform: monotone, the identity at lambda = 1, log-like below it.
double YeoJohnson(double lambda, double y) {
  if (y >= 0) return std::abs(lambda) < 1e-9 ? std::log1p(y) : (std::pow(y + 1, lambda) - 1) / lambda;
  return std::abs(lambda - 2) < 1e-9 ? -std::log1p(-y) : -(std::pow(1 - y, 2 - lambda) - 1) / (2 - lambda);
}

// The lambda in [-2, 2] (steps of 0.1) under which standardised `y` look most normal, by the
// transform's profile log likelihood.
double FitYeoJohnson(const std::vector<double>& y) {
  const double n = static_cast<double>(y.size());
  double best_lambda = 1, best = -kInfinity;
  double log_jacobian_unit = 0;  // sum of sign(y) log(|y| + 1)
  for (double v : y) log_jacobian_unit += (v >= 0 ? 1 : -1) * std::log1p(std::abs(v));
  for (int step = -20; step <= 20; ++step) {
    const double lambda = step / 10.0;
    double sum = 0, sum2 = 0;
    for (double v : y) sum += YeoJohnson(lambda, v);
    const double mean = sum / n;
    for (double v : y) sum2 += (YeoJohnson(lambda, v) - mean) * (YeoJohnson(lambda, v) - mean);
    const double variance = sum2 / n;
    if (!(variance > 1e-300) || !std::isfinite(variance)) continue;
    const double ll = -0.5 * n * std::log(variance) + (lambda - 1) * log_jacobian_unit;
    if (ll > best) {
      best = ll;
      best_lambda = lambda;
    }
  }
  return best_lambda;
}

}  // namespace

struct GpSampler::Model {
  explicit Model(const std::vector<bool>& categorical, int dims) : gp(categorical, GpKernel::Default(dims)) {}
  GaussianProcess gp;
  std::vector<std::int64_t> keys;  // the trial numbers of gp's inputs that are trials, in order
  Eigen::Index real = 0;           // how many inputs are trials; fantasies follow them
  Eigen::Index fitted_at = 0;      // observations at the last fit of the kernel parameters
  bool fitted = false;
  // standardised = (YeoJohnson(lambda, (raw - mean) / scale) - warped_mean) / warped_scale
  double mean = 0, scale = 1, lambda = 1, warped_mean = 0, warped_scale = 1;
  Eigen::VectorXd y;           // standardised targets, trials then fantasies
  bool stale_targets = false;  // y holds a fantasy above the mean that gp's targets lack

  double Standardized(double raw) const {
    return (YeoJohnson(lambda, (raw - mean) / scale) - warped_mean) / warped_scale;
  }
};

// What the history says, in the models' terms: each trial that informs the objective with its
// input and loss (NaN for a failure, which takes the worst loss), and each bound's slacks.
struct GpSampler::Observations {
  std::vector<std::int64_t> numbers;
  std::vector<Eigen::VectorXd> inputs;
  std::vector<double> losses;
  std::vector<bool> scored;  // may be the incumbent (HasScore)
  struct Slacks {
    std::vector<std::int64_t> numbers;
    std::vector<size_t> input;  // index into inputs
    std::vector<double> values;
  };
  std::vector<Slacks> bounds;
};

GpSampler::GpSampler(SearchSpace space, SamplerOptions options, StudyOptions study)
    : space_(std::move(space)), options_(std::move(options)), study_(std::move(study)) {
  for (const ParamSpec& spec : space_.params()) {
    if (spec.kind == ParamKind::kFixed) continue;
    Feature f;
    f.spec = &spec;
    f.categorical = spec.kind == ParamKind::kCategorical;
    if (!f.categorical) f.domain = NumericDomain::For(spec);
    features_.push_back(f);
    if (!f.categorical && SearchSpace::IsConditional(spec)) {
      Feature active;
      active.spec = &spec;
      active.indicator = active.categorical = true;
      features_.push_back(active);
    }
  }
  for (const Feature& f : features_) categorical_.push_back(f.categorical);
  Result<std::unique_ptr<SobolSampler>> sobol = SobolSampler::Create(space_, options_.design_seed, true);
  if (sobol.ok()) sobol_ = std::move(*sobol);
}

GpSampler::~GpSampler() = default;

const GaussianProcess* GpSampler::objective_model() const { return objective_ ? &objective_->gp : nullptr; }

std::optional<Eigen::VectorXd> GpSampler::Encode(const ParamSet& params) const {
  Eigen::VectorXd x(dimensions());
  for (size_t i = 0; i < features_.size(); ++i) {
    const Feature& f = features_[i];
    const auto it = params.find(f.spec->name);
    const Eigen::Index d = static_cast<Eigen::Index>(i);
    if (f.indicator) {
      x[d] = it == params.end() ? 0 : 1;
    } else if (f.categorical) {
      if (it == params.end()) {
        x[d] = -1;  // inactive: a value of its own
        continue;
      }
      const std::optional<int> index = ChoiceIndex(*f.spec, it->second);
      if (!index) return std::nullopt;
      x[d] = *index;
    } else if (it == params.end()) {
      x[d] = 0.5;  // inactive; the indicator beside it tells the model
    } else if (f.domain.width() <= 0) {
      x[d] = 0.5;
    } else {
      const double u = (f.domain.Encode(it->second) - f.domain.low) / f.domain.width();
      if (!(u >= -1e-9 && u <= 1 + 1e-9)) return std::nullopt;  // outside this space's bounds
      x[d] = std::min(std::max(u, 0.0), 1.0);
    }
  }
  return x;
}

ParamSet GpSampler::Decode(const Eigen::VectorXd& x) const {
  ParamSet out;
  size_t i = 0;
  for (const ParamSpec& spec : space_.params()) {
    if (spec.kind == ParamKind::kFixed) {
      if (SearchSpace::IsActive(spec, out)) out[spec.name] = spec.fixed_value;
      continue;
    }
    const Feature& f = features_[i];
    const double v = x[static_cast<Eigen::Index>(i)];
    i += (i + 1 < features_.size() && features_[i + 1].indicator) ? 2 : 1;
    if (!SearchSpace::IsActive(spec, out)) continue;
    if (f.categorical) {
      const double last = static_cast<double>(spec.choices.size() - 1);
      out[spec.name] = spec.choices[static_cast<size_t>(std::min(std::max(std::round(v), 0.0), last))];
    } else {
      out[spec.name] = f.domain.Decode(spec, f.domain.low + std::min(std::max(v, 0.0), 1.0) * f.domain.width());
    }
  }
  return out;
}

Eigen::VectorXd GpSampler::Snap(const Eigen::VectorXd& x) const { return *Encode(Decode(x)); }

GpSampler::Observations GpSampler::Observe(const TrialHistory& history) const {
  Observations o;
  const double sign = study_.metrics.front().direction == Direction::kMaximize ? -1.0 : 1.0;
  const std::vector<Bound> bounds = BoundsOf(study_);
  o.bounds.resize(bounds.size());
  const auto observe = [&](const TrialRecord& r) {
    const bool measured =
        (r.state == TrialState::kComplete || r.state == TrialState::kPruned || r.state == TrialState::kPaused) &&
        r.value.has_value() && std::isfinite(*r.value);
    if (!measured && !IsFailure(r.state)) return;  // interrupted, or nothing reported: says nothing
    std::optional<Eigen::VectorXd> x = Encode(r.params);
    if (!x) return;
    o.numbers.push_back(r.number);
    o.inputs.push_back(std::move(*x));
    // A completed trial outside the constraints still measured its objective: the constraint
    // models, not the objective's, say that it is infeasible.
    o.losses.push_back(measured ? sign * *r.value : std::numeric_limits<double>::quiet_NaN());
    o.scored.push_back(measured && HasScore(r));
    if (r.state != TrialState::kComplete) return;
    for (size_t b = 0; b < bounds.size(); ++b) {
      const double v = study_.ConstrainedValue(*bounds[b].constraint, r);
      if (!std::isfinite(v)) continue;
      o.bounds[b].numbers.push_back(r.number);
      o.bounds[b].input.push_back(o.inputs.size() - 1);
      o.bounds[b].values.push_back(Slack(bounds[b], v));
    }
  };
  for (const TrialRecord& r : history.finished) observe(r);
  for (const auto& [number, r] : history.paused) observe(r);
  return o;
}

void GpSampler::UpdateModels(const Observations& o) {
  const auto update = [&](Model& model, const std::vector<std::int64_t>& numbers,
                          const std::vector<const Eigen::VectorXd*>& inputs, std::vector<double> values, bool warp) {
    const std::vector<size_t> kept = Kept(values, static_cast<size_t>(options_.max_points));
    const Eigen::Index n = static_cast<Eigen::Index>(kept.size());
    // Standardise: scaled by the largest magnitude first, so that huge values cannot overflow.
    double magnitude = 0;
    for (size_t i : kept) magnitude = std::max(magnitude, std::abs(values[i]));
    const double pre = magnitude > 0 && std::isfinite(magnitude) ? magnitude : 1;
    double sum = 0, sum2 = 0;
    for (size_t i : kept) sum += values[i] / pre;
    const double mean = sum / static_cast<double>(n);
    for (size_t i : kept) sum2 += (values[i] / pre - mean) * (values[i] / pre - mean);
    const double sd = std::sqrt(sum2 / static_cast<double>(n));
    model.mean = mean * pre;
    model.scale = (sd > 1e-12 ? sd : 1.0) * pre;
    // The objective's losses are often skewed (a few diverged trials far above the rest): a power
    // transform, fitted to them, makes them look normal to the model (as HEBO does). Slacks keep
    // their scale, since their zero is the bound.
    model.lambda = 1;
    model.warped_mean = 0;
    model.warped_scale = 1;
    if (warp) {
      std::vector<double> z;
      for (size_t i : kept) z.push_back((values[i] - model.mean) / model.scale);
      model.lambda = FitYeoJohnson(z);
      double wsum = 0, wsum2 = 0;
      for (double& v : z) wsum += (v = YeoJohnson(model.lambda, v));
      model.warped_mean = wsum / static_cast<double>(n);
      for (double v : z) wsum2 += (v - model.warped_mean) * (v - model.warped_mean);
      const double wsd = std::sqrt(wsum2 / static_cast<double>(n));
      model.warped_scale = wsd > 1e-12 ? wsd : 1.0;
    }
    Eigen::VectorXd y(n);
    Eigen::MatrixXd x(dimensions(), n);
    std::vector<std::int64_t> keys(kept.size());
    for (Eigen::Index k = 0; k < n; ++k) {
      const size_t i = kept[static_cast<size_t>(k)];
      y[k] = model.Standardized(values[i]);
      x.col(k) = *inputs[i];
      keys[static_cast<size_t>(k)] = numbers[i];
    }
    const bool refit = !model.fitted || (n <= kRefitEveryTrialUpTo && n != model.fitted_at) ||
                       static_cast<double>(n) >= kRefitGrowth * static_cast<double>(model.fitted_at);
    if (refit) {
      // On at most kFitPoints trials: the best half and the most recent.
      std::vector<Eigen::Index> fit(static_cast<size_t>(n));
      std::iota(fit.begin(), fit.end(), 0);
      if (n > kFitPoints) {
        std::vector<Eigen::Index> by_value = fit;
        std::partial_sort(by_value.begin(), by_value.begin() + kFitPoints / 2, by_value.end(),
                          [&](Eigen::Index a, Eigen::Index b) { return y[a] < y[b]; });
        std::vector<bool> take(static_cast<size_t>(n), false);
        for (Eigen::Index k = 0; k < kFitPoints / 2; ++k)
          take[static_cast<size_t>(by_value[static_cast<size_t>(k)])] = true;
        Eigen::Index taken = kFitPoints / 2;
        for (Eigen::Index k = n - 1; k >= 0 && taken < kFitPoints; --k) {
          if (!take[static_cast<size_t>(k)]) {
            take[static_cast<size_t>(k)] = true;
            ++taken;
          }
        }
        fit.clear();
        for (Eigen::Index k = 0; k < n; ++k) {
          if (take[static_cast<size_t>(k)]) fit.push_back(k);
        }
      }
      Eigen::MatrixXd fx(dimensions(), static_cast<Eigen::Index>(fit.size()));
      Eigen::VectorXd fy(static_cast<Eigen::Index>(fit.size()));
      for (size_t k = 0; k < fit.size(); ++k) {
        fx.col(static_cast<Eigen::Index>(k)) = x.col(fit[k]);
        fy[static_cast<Eigen::Index>(k)] = y[fit[k]];
      }
      GpFitOptions fit_options;
      fit_options.deterministic = options_.deterministic;
      const GpKernel kernel = FitKernel(fx, fy, categorical_, model.gp.kernel(), fit_options);
      model.gp.Reset(kernel);
      model.keys.clear();
      model.fitted = true;
      model.fitted_at = n;
    }
    // Keep the factor of the longest common prefix; extend it with the rest.
    size_t prefix = 0;
    while (prefix < model.keys.size() && prefix < keys.size() && model.keys[prefix] == keys[prefix] &&
           static_cast<Eigen::Index>(prefix) < model.real) {
      ++prefix;
    }
    model.gp.Truncate(static_cast<Eigen::Index>(prefix));
    for (size_t k = prefix; k < keys.size(); ++k) model.gp.Append(x.col(static_cast<Eigen::Index>(k)));
    model.keys = std::move(keys);
    model.real = n;
    model.y = y;
    model.gp.SetTargets(model.y);
  };

  // The objective: failures take the worst loss measured (or 0 when none was).
  std::vector<double> losses = o.losses;
  double worst = -kInfinity;
  for (double l : losses) {
    if (!std::isnan(l)) worst = std::max(worst, l);
  }
  for (double& l : losses) {
    if (std::isnan(l)) l = std::isfinite(worst) ? worst : 0;
  }
  std::vector<const Eigen::VectorXd*> inputs;
  for (const Eigen::VectorXd& x : o.inputs) inputs.push_back(&x);
  if (!objective_) objective_ = std::make_unique<Model>(categorical_, dimensions());
  update(*objective_, o.numbers, inputs, losses, true);
  best_ = kInfinity;
  any_feasible_ = false;
  for (size_t i = 0; i < o.losses.size(); ++i) {
    if (o.scored[i]) {
      best_ = std::min(best_, objective_->Standardized(o.losses[i]));
      any_feasible_ = true;
    }
  }
  constraints_.resize(o.bounds.size());
  for (size_t b = 0; b < o.bounds.size(); ++b) {
    const Observations::Slacks& s = o.bounds[b];
    if (s.values.empty()) {
      constraints_[b].reset();
      continue;
    }
    if (!constraints_[b]) constraints_[b] = std::make_unique<Model>(categorical_, dimensions());
    std::vector<const Eigen::VectorXd*> bound_inputs;
    for (size_t i : s.input) bound_inputs.push_back(&o.inputs[i]);
    update(*constraints_[b], s.numbers, bound_inputs, s.values, false);
  }
}

void GpSampler::AddFantasy(const Eigen::VectorXd& x, bool solve) {
  // The objective's fantasy is its posterior mean, or the average loss (0, standardised) where the
  // mean promises better: believed at a mean below the best trial, a point keeps the mean's lead as
  // its expected improvement at no variance, and a confident model sent the next workers within
  // 0.001 of it; lifted to the average, the neighbourhood looks no better than average until the
  // trial reports, as TPE's constant liar counts a running trial as not good. Where the value is the
  // mean, the targets need no solve (GaussianProcess::AppendAtMean). Constraint models believe
  // their mean.
  const auto add = [&](Model& model, double floor) {
    const double mean = model.gp.AppendAtMean(x);
    const double value = std::max(mean, floor);
    model.y.conservativeResize(model.y.size() + 1);
    model.y[model.y.size() - 1] = value;
    if (value != mean) model.stale_targets = true;
    if (solve && model.stale_targets) {
      model.gp.SetTargets(model.y);
      model.stale_targets = false;
    }
  };
  if (objective_) add(*objective_, 0.0);
  for (const std::unique_ptr<Model>& c : constraints_) {
    if (c) add(*c, -kInfinity);
  }
}

void GpSampler::SolveFantasies() {
  for (Model* model : AllModels()) {
    if (model->stale_targets) model->gp.SetTargets(model->y);
    model->stale_targets = false;
  }
}

std::vector<GpSampler::Model*> GpSampler::AllModels() {
  std::vector<Model*> out;
  if (objective_) out.push_back(objective_.get());
  for (const std::unique_ptr<Model>& c : constraints_) {
    if (c) out.push_back(c.get());
  }
  return out;
}

void GpSampler::DropFantasies() {
  for (Model* model : AllModels()) {
    model->gp.Truncate(model->real);
    model->y.conservativeResize(model->real);
    model->gp.SetTargets(model->y);
    model->stale_targets = false;
  }
}

Eigen::VectorXd GpSampler::Acquisition(const Eigen::MatrixXd& points) const {
  Eigen::VectorXd score = Eigen::VectorXd::Zero(points.cols());
  Eigen::VectorXd mean, variance;
  if (any_feasible_) {
    objective_->gp.Predict(points, &mean, &variance);
    for (Eigen::Index j = 0; j < points.cols(); ++j) score[j] = LogExpectedImprovement(mean[j], variance[j], best_);
  }
  for (const std::unique_ptr<Model>& c : constraints_) {
    if (!c) continue;
    c->gp.Predict(points, &mean, &variance);
    const double zero = c->Standardized(0);
    for (Eigen::Index j = 0; j < points.cols(); ++j) score[j] += LogProbabilityBelowZero(mean[j] - zero, variance[j]);
  }
  return score;
}

std::vector<std::pair<double, Eigen::Index>> GpSampler::Best(const Eigen::MatrixXd& points, size_t k) const {
  struct Screen {
    const Model* model;
    GaussianProcess::Screened s;
    double zero;  // a constraint model's standardised bound
  };
  std::vector<Screen> screens;
  if (any_feasible_) screens.push_back({objective_.get(), objective_->gp.Screen(points), 0});
  for (const std::unique_ptr<Model>& c : constraints_) {
    if (c) screens.push_back({c.get(), c->gp.Screen(points), c->Standardized(0)});
  }
  const bool with_objective = any_feasible_;
  const auto term = [&](size_t which, Eigen::Index j, double variance) {
    const Screen& s = screens[which];
    if (which == 0 && with_objective) return LogExpectedImprovement(s.s.mean[j], variance, best_);
    return LogProbabilityBelowZero(s.s.mean[j] - s.zero, variance);
  };
  // Bounds: EI grows with the variance; P(feasible) too where the mean is infeasible, and is at
  // most 1 where it is not.
  const Eigen::Index m = points.cols();
  std::vector<std::pair<double, Eigen::Index>> bounds(static_cast<size_t>(m));
  for (Eigen::Index j = 0; j < m; ++j) {
    double bound = 0;
    for (size_t w = 0; w < screens.size(); ++w) {
      const bool constraint = !(w == 0 && with_objective);
      if (constraint && screens[w].s.mean[j] - screens[w].zero <= 0) continue;
      bound += term(w, j, screens[w].s.variance_bound[j]);
    }
    bounds[static_cast<size_t>(j)] = {bound, j};
  }
  std::sort(bounds.begin(), bounds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::pair<double, Eigen::Index>> best;  // kept sorted, best first, at most k
  const auto consider = [&](double exact, Eigen::Index j) {
    const auto at = std::find_if(best.begin(), best.end(), [&](const auto& b) { return exact > b.first; });
    best.insert(at, {exact, j});
    if (best.size() > k) best.pop_back();
  };
  const auto exact_of = [&](Eigen::Index j, double objective_variance) {
    double exact = 0;
    for (size_t w = 0; w < screens.size(); ++w) {
      const double variance =
          w == 0 && with_objective ? objective_variance : screens[w].model->gp.Variance(points.col(j));
      exact += term(w, j, variance);
    }
    return exact;
  };
  // The k most promising by their bound, exactly: a threshold for the others.
  size_t next = 0;
  for (; next < bounds.size() && best.size() < k; ++next) {
    const Eigen::Index j = bounds[next].second;
    consider(exact_of(j, with_objective ? objective_->gp.Variance(points.col(j)) : 0), j);
  }
  std::vector<Eigen::Index> rest;
  for (; next < bounds.size() && bounds[next].first > best.back().first; ++next) rest.push_back(bounds[next].second);
  if (rest.empty()) return best;
  if (!with_objective) {
    for (const Eigen::Index j : rest) consider(exact_of(j, 0), j);
    return best;
  }
  // The rest through the objective's factor block by block, each dropped once its bound (the
  // objective's EI at the variance given the rows so far, plus the constraints' bounds) falls
  // below the k-th best.
  std::vector<double> other_bound(static_cast<size_t>(m), 0);  // the constraints' share of each bound
  for (const Eigen::Index j : rest) {
    for (size_t w = 1; w < screens.size(); ++w) {
      if (screens[w].s.mean[j] - screens[w].zero > 0)
        other_bound[static_cast<size_t>(j)] += term(w, j, screens[w].s.variance_bound[j]);
    }
  }
  const double threshold = best.back().first;
  const auto survivors =
      objective_->gp.Variances(points, screens[0].s.variance_bound, rest, [&](Eigen::Index j, double variance) {
        return term(0, j, variance) + other_bound[static_cast<size_t>(j)] > threshold;
      });
  for (const auto& [j, variance] : survivors) consider(exact_of(j, variance), j);
  return best;
}

double GpSampler::AcquisitionWithGradient(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
  double score = 0, mean, variance, d_mean, d_variance;
  Eigen::VectorXd mean_gradient, variance_gradient;
  gradient->setZero(x.size());
  if (any_feasible_) {
    objective_->gp.PredictWithGradient(x, &mean, &variance, &mean_gradient, &variance_gradient);
    score = LogExpectedImprovement(mean, variance, best_, &d_mean, &d_variance);
    *gradient += d_mean * mean_gradient + d_variance * variance_gradient;
  }
  for (const std::unique_ptr<Model>& c : constraints_) {
    if (!c) continue;
    c->gp.PredictWithGradient(x, &mean, &variance, &mean_gradient, &variance_gradient);
    score += LogProbabilityBelowZero(mean - c->Standardized(0), variance, &d_mean, &d_variance);
    *gradient += d_mean * mean_gradient + d_variance * variance_gradient;
  }
  return score;
}

ParamSet GpSampler::Propose(std::int64_t number) {
  SplitMix64 rng = StreamFor(options_.seed ^ 0x6770u, static_cast<std::uint64_t>(number));
  // 1. A quasi-random sweep of the whole space, and perturbations of the best trials so far.
  std::vector<Eigen::VectorXd> candidates;
  const auto m = static_cast<std::uint64_t>(options_.n_candidates);
  for (std::uint64_t j = 0; j < m; ++j) {
    const ParamSet p =
        sobol_ ? SobolSampler::ParamsAt(
                     space_, sobol_->Point((static_cast<std::uint64_t>(number) * m + j + (1u << 20)) & 0xffffffffu))
               : RandomSampler::Draw(space_, rng);
    candidates.push_back(*Encode(p));
  }
  const GaussianProcess& gp = objective_->gp;
  std::vector<Eigen::Index> order(static_cast<size_t>(objective_->real));
  std::iota(order.begin(), order.end(), 0);
  const size_t incumbents = std::min<size_t>(kIncumbents, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(incumbents), order.end(),
                    [&](Eigen::Index a, Eigen::Index b) { return objective_->y[a] < objective_->y[b]; });
  for (size_t k = 0; k < incumbents; ++k) {
    const Eigen::VectorXd base = gp.inputs().col(order[k]);
    for (int j = 0; j < kPerturbedPerIncumbent; ++j) {
      Eigen::VectorXd x = base;
      const double scale = j % 2 ? 0.02 : 0.1;
      for (Eigen::Index d = 0; d < x.size(); ++d) {
        const Feature& f = features_[static_cast<size_t>(d)];
        if (f.indicator) continue;
        if (f.categorical) {
          if (x[d] >= 0 && rng.Uniform() < 1.0 / static_cast<double>(x.size())) {
            x[d] = static_cast<double>(rng.Below(f.spec->choices.size()));
          }
        } else {
          x[d] = std::min(std::max(x[d] + scale * rng.Normal(), 0.0), 1.0);
        }
      }
      candidates.push_back(Snap(x));
    }
  }
  Eigen::MatrixXd points(dimensions(), static_cast<Eigen::Index>(candidates.size()));
  for (size_t j = 0; j < candidates.size(); ++j) points.col(static_cast<Eigen::Index>(j)) = candidates[j];

  // 2. Local gradient steps from the best candidates, in the numeric inputs that are active;
  //    then onto the grid of ints and steps, and one pass over each categorical's choices.
  const std::vector<std::pair<double, Eigen::Index>> ranked =
      Best(points, static_cast<size_t>(std::max(options_.n_local_searches, 1)));
  const size_t starts = std::min<size_t>(static_cast<size_t>(options_.n_local_searches), ranked.size());
  Eigen::VectorXd best_x = points.col(ranked.front().second);
  double best_score = ranked.front().first;
  const Objective negative = [&](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    const double v = AcquisitionWithGradient(x, g);
    *g = -*g;
    return -v;
  };
  BoxLbfgsOptions lbfgs;
  lbfgs.max_iterations = 20;
  lbfgs.projected_gradient_tol = 1e-6;
  for (size_t s = 0; s < starts; ++s) {
    Eigen::VectorXd x = points.col(ranked[s].second);
    Eigen::VectorXd lower = x, upper = x;
    for (size_t d = 0; d < features_.size(); ++d) {
      const Feature& f = features_[d];
      const bool inactive =
          d + 1 < features_.size() && features_[d + 1].indicator && x[static_cast<Eigen::Index>(d + 1)] == 0;
      if (f.categorical || inactive) continue;
      lower[static_cast<Eigen::Index>(d)] = 0;
      upper[static_cast<Eigen::Index>(d)] = 1;
    }
    if ((upper - lower).maxCoeff() > 0) x = MinimizeInBox(negative, x, lower, upper, lbfgs).x;
    x = Snap(x);
    double here = Acquisition(x)[0];
    for (size_t d = 0; d < features_.size(); ++d) {
      const Feature& f = features_[d];
      if (!f.categorical || f.indicator || x[static_cast<Eigen::Index>(d)] < 0) continue;
      const size_t choices = f.spec->choices.size();
      Eigen::MatrixXd alternatives(dimensions(), static_cast<Eigen::Index>(choices));
      for (size_t c = 0; c < choices; ++c) {
        Eigen::VectorXd y = x;
        y[static_cast<Eigen::Index>(d)] = static_cast<double>(c);
        alternatives.col(static_cast<Eigen::Index>(c)) = Snap(y);
      }
      const std::pair<double, Eigen::Index> top = Best(alternatives, 1).front();
      if (top.first > here) {
        here = top.first;
        x = alternatives.col(top.second);
      }
    }
    if (here > best_score) {
      best_score = here;
      best_x = x;
    }
  }
  return Decode(best_x);
}

std::vector<ParamSet> GpSampler::AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory& history) {
  std::vector<ParamSet> out;
  if (features_.empty()) {  // nothing to model: the fixed parameters, or none (the trial defines them)
    for (std::int64_t n : numbers) {
      SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(n));
      out.push_back(RandomSampler::Draw(space_, rng));
    }
    return out;
  }
  const Observations observed = Observe(history);
  if (static_cast<std::int64_t>(observed.numbers.size()) < options_.n_startup_trials) {
    for (std::int64_t n : numbers) {
      if (sobol_) {
        // A shard's part of the sweep's one design (SamplerOptions::design_stride).
        const auto point =
            static_cast<std::int64_t>(options_.design_offset) + static_cast<std::int64_t>(options_.design_stride) * n;
        out.push_back(*sobol_->Ask(point, history));
      } else {
        SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(n));
        out.push_back(RandomSampler::Draw(space_, rng));
      }
    }
    return out;
  }
  UpdateModels(observed);
  if (options_.fantasize) {  // the most recent kMaxRunningFantasies running trials, newest first
    int added = 0;
    for (auto it = history.running.rbegin(); it != history.running.rend() && added < kMaxRunningFantasies; ++it) {
      if (std::find(numbers.begin(), numbers.end(), it->first) != numbers.end()) continue;
      if (std::optional<Eigen::VectorXd> x = Encode(it->second)) {
        AddFantasy(*x, false);
        ++added;
      }
    }
    SolveFantasies();
  }
  for (std::int64_t n : numbers) {
    out.push_back(Propose(n));
    if (options_.fantasize) AddFantasy(*Encode(out.back()), true);
  }
  DropFantasies();
  return out;
}

std::optional<ParamSet> GpSampler::Ask(std::int64_t number, const TrialHistory& history) {
  return AskBatch({number}, history).front();
}

Result<ParamValue> GpSampler::SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& /*asked*/,
                                                  const TrialHistory& history) {
  // The recent evidence: the last kSharedWindow scored trials that defined parameters.
  std::vector<const TrialRecord*> recent;
  for (auto r = history.finished.rbegin(); r != history.finished.rend() && recent.size() < kSharedWindow; ++r) {
    if (HasScore(*r) && !r->distributions.empty()) recent.push_back(&*r);
  }
  std::vector<ParamSpec> shared;
  std::string key;
  bool asked_is_shared = false;
  for (const auto& [name, distribution] : history.trial_defined) {
    if (recent.empty() || space_.Find(name)) continue;
    const bool everywhere = std::all_of(recent.begin(), recent.end(), [&](const TrialRecord* r) {
      const auto had = r->distributions.find(name);
      return had != r->distributions.end() && had->second == distribution && r->params.count(name);
    });
    if (!everywhere) continue;
    Result<ParamSpec> parsed = DistributionFromJson(name, distribution);
    if (!parsed.ok()) continue;
    asked_is_shared = asked_is_shared || (name == spec.name && SameDistribution(*parsed, spec));
    key += name + "=" + distribution + ";";
    shared.push_back(std::move(*parsed));
  }
  if (!asked_is_shared) {  // independent TPE, as Optuna's GP sampler draws what it does not model
    return SuggestIndependentTpe(number, spec, options_, study_.metrics, history);
  }
  if (key != shared_key_ || !shared_) {
    Result<SearchSpace> space = SearchSpace::Create(shared);
    if (!space.ok()) return space.status();
    SamplerOptions options = options_;
    options.seed = options.design_seed = ParamSeed(options_.seed, "trial-defined");
    options.design_offset = 0;
    options.design_stride = 1;
    shared_ = std::make_unique<GpSampler>(std::move(*space), options, study_);
    shared_key_ = key;
    shared_proposals_.clear();
  }
  auto proposal = shared_proposals_.find(number);
  if (proposal == shared_proposals_.end()) {
    // Its model learns from the trials that had every shared parameter.
    const auto has_all = [&](const ParamSet& params) {
      return std::all_of(shared.begin(), shared.end(), [&](const ParamSpec& s) { return params.count(s.name) > 0; });
    };
    TrialHistory having;
    for (const TrialRecord& r : history.finished) {
      if (has_all(r.params)) having.finished.push_back(r);
    }
    for (const auto& [n, params] : history.running) {
      if (n != number && has_all(params)) having.running.emplace(n, params);
    }
    std::optional<ParamSet> drawn = shared_->Ask(number, having);
    proposal = shared_proposals_.emplace(number, drawn.value_or(ParamSet())).first;
    for (auto it = shared_proposals_.begin(); it != shared_proposals_.end();) {  // those of ended trials go
      it = it->first != number && !history.running.count(it->first) ? shared_proposals_.erase(it) : std::next(it);
    }
  }
  const auto value = proposal->second.find(spec.name);
  if (value == proposal->second.end()) return DrawTrialDefined(spec, ParamSeed(options_.seed, spec.name), number);
  return value->second;
}

}  // namespace cleansweep
