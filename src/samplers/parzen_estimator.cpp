#include "samplers/parzen_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cleansweep {
namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;
constexpr double kTiny = 1e-300;

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// log(P(a <= N(0,1) <= b)), accurate in both tails.
double LogNormalMass(double a, double b) {
  if (a < -9 && b > 9) return 0;  // the whole Gaussian is inside (the mass misses 1 by < 1e-18)
  if (b < 0) return LogNormalMass(-b, -a);
  if (a > 6) {
    // Far in the upper tail: Mills' ratio, P(Z >= t) ~ phi(t) / t (relative error < 3% at t = 6,
    // far less beyond), which spares the erfc calls that dominate an ask.
    const double log_upper_a = -0.5 * a * a - kLogSqrt2Pi - std::log(a);
    if (b > 40) return log_upper_a;
    const double log_upper_b = -0.5 * b * b - kLogSqrt2Pi - std::log(b);
    return log_upper_a + std::log1p(-std::exp(std::min(log_upper_b - log_upper_a, -1e-16)));
  }
  if (a > 0) return std::log(std::max(NormalCdf(-a) - NormalCdf(-b), kTiny));
  return std::log(std::max(NormalCdf(b) - NormalCdf(a), kTiny));
}

double LogSumExp(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) {
    if (x > m - 40) s += std::exp(x - m);  // smaller terms change the sum by < 1e-17 each
  }
  return m + std::log(s);
}

}  // namespace

ParzenEstimator::ParzenEstimator(std::vector<EstimatorDim> dims, const std::vector<std::vector<double>>& rows,
                                 const std::vector<double>& weights, double prior_weight)
    : dims_(std::move(dims)), components_(rows.size() + 1), prior_(rows.size()), prior_weight_(prior_weight) {
  raw_weights_ = weights;
  raw_weights_.push_back(prior_weight);
  Normalise();
  const size_t n_dims = dims_.size();
  for (auto* v : {&mu_, &sigma_, &inv_sigma_, &log_z_, &log_norm_, &log_p_}) v->resize(n_dims);
  log_step_.resize(n_dims);
  min_sigma_.resize(n_dims);
  order_.resize(n_dims);
  choice_.resize(n_dims);
  for (size_t d = 0; d < n_dims; ++d) {
    if (dims_[d].categorical) {
      choice_[d].resize(components_);
      for (size_t i = 0; i < rows.size(); ++i) choice_[d][i] = static_cast<int>(rows[i][d]);
      choice_[d][prior_] = -1;
      FitCategorical(d);
      continue;
    }
    const NumericDomain& dom = dims_[d].domain;
    mu_[d].resize(components_);
    for (size_t i = 0; i < rows.size(); ++i) mu_[d][i] = rows[i][d];
    mu_[d][prior_] = 0.5 * (dom.low + dom.high);
    log_step_[d] = dom.step > 0 ? std::log(dom.step) : 0;
    FitNumeric(d);
  }
}

void ParzenEstimator::Normalise() {
  const double total = std::accumulate(raw_weights_.begin(), raw_weights_.end(), 0.0);
  weights_.resize(raw_weights_.size());
  log_weights_.resize(raw_weights_.size());
  for (size_t c = 0; c < raw_weights_.size(); ++c) {
    weights_[c] = raw_weights_[c] / total;
    log_weights_[c] = std::log(std::max(weights_[c], kTiny));
  }
}

void ParzenEstimator::FitCategorical(size_t d) {
  // Each observation: its own choice plus prior_weight / kernels on every choice, normalised, so
  // kernels sharpen as observations accumulate; the prior component is uniform. Three values in
  // all: an observation's own choice, its other choices, and the prior's.
  const auto k = static_cast<size_t>(dims_[d].n_choices);
  const double fill = prior_weight_ / static_cast<double>(components_);
  const double mass = 1.0 + fill * static_cast<double>(k);
  const double log_own = std::log((1.0 + fill) / mass), log_other = std::log(fill / mass);
  const double log_prior = std::log(fill / (fill * static_cast<double>(k)));
  std::vector<double>& lp = log_p_[d];
  lp.resize(components_ * k);
  for (size_t c = 0; c < components_; ++c) {
    const int own = choice_[d][c];
    for (size_t j = 0; j < k; ++j) {
      lp[c * k + j] = own < 0 ? log_prior : static_cast<int>(j) == own ? log_own : log_other;
    }
  }
}

void ParzenEstimator::SetWidth(size_t d, size_t c, double sigma) {
  const NumericDomain& dom = dims_[d].domain;
  const double mu = mu_[d][c];
  sigma_[d][c] = sigma;
  inv_sigma_[d][c] = 1.0 / sigma;
  log_z_[d][c] = LogNormalMass((dom.low - mu) / sigma, (dom.high - mu) / sigma);
  log_norm_[d][c] = -kLogSqrt2Pi - std::log(sigma) - log_z_[d][c];
}

double ParzenEstimator::MinSigma(size_t d) const {
  return dims_[d].domain.width() / std::min(100.0, 1.0 + static_cast<double>(components_));
}

void ParzenEstimator::FitWidthAt(size_t d, size_t r) {
  // Distance to the farther of the two neighbours (prior included), clipped to [min, range]; the
  // prior is broad whatever its neighbours.
  const std::vector<double>& mu = mu_[d];
  const std::vector<size_t>& order = order_[d];
  const double range = dims_[d].domain.width();
  const double left = r > 0 ? mu[order[r]] - mu[order[r - 1]] : 0;
  const double right = r + 1 < components_ ? mu[order[r + 1]] - mu[order[r]] : 0;
  SetWidth(d, order[r], order[r] == prior_ ? range : std::clamp(std::max(left, right), min_sigma_[d], range));
}

void ParzenEstimator::FitNumeric(size_t d) {
  const std::vector<double>& mu = mu_[d];
  min_sigma_[d] = MinSigma(d);
  // Among equal values (ints, stepped floats) the order decides which kernels get the floor: it
  // is std::sort's, as it always was, so that one ask's proposals do not change.
  std::vector<size_t>& order = order_[d];
  order.resize(components_);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mu[a] < mu[b]; });
  for (auto* v : {&sigma_[d], &inv_sigma_[d], &log_z_[d], &log_norm_[d]}) v->resize(components_);
  for (size_t r = 0; r < components_; ++r) FitWidthAt(d, r);
}

void ParzenEstimator::Add(const std::vector<double>& row, double weight) {
  const size_t c = components_++;
  raw_weights_.push_back(weight);
  Normalise();
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].categorical) {
      choice_[d].push_back(static_cast<int>(row[d]));
      FitCategorical(d);
      continue;
    }
    std::vector<double>& mu = mu_[d];
    mu.push_back(row[d]);
    for (auto* v : {&sigma_[d], &inv_sigma_[d], &log_z_[d], &log_norm_[d]}) v->push_back(0);
    if (MinSigma(d) != min_sigma_[d]) {
      FitNumeric(d);  // the floor on every width moved: refit them all (below 100 kernels)
      continue;
    }
    // Only the new kernel and its two neighbours see a gap change. Among equal values it goes last.
    std::vector<size_t>& order = order_[d];
    const auto at =
        std::upper_bound(order.begin(), order.end(), row[d], [&](double v, size_t other) { return v < mu[other]; });
    const auto r = static_cast<size_t>(at - order.begin());
    order.insert(at, c);
    for (size_t q = r > 0 ? r - 1 : 0; q <= r + 1 && q < components_; ++q) FitWidthAt(d, q);
  }
}

double ParzenEstimator::NumericLogKernel(size_t d, size_t c, double x) const {
  const NumericDomain& dom = dims_[d].domain;
  const double mu = mu_[d][c], sigma = sigma_[d][c];
  const double z = (x - mu) / sigma;
  if (dom.step > 0) {
    // The mass of x's bin: exact for kernels up to two bins wide; wider ones take density times
    // width (off by (z^2 - 1) / 96 or less, relatively), which spares two erfc calls.
    if (sigma < 2 * dom.step) {
      return LogNormalMass((x - dom.step / 2 - mu) / sigma, (x + dom.step / 2 - mu) / sigma) - log_z_[d][c];
    }
    return -0.5 * z * z + log_norm_[d][c] + log_step_[d];
  }
  return -0.5 * z * z + log_norm_[d][c];
}

double ParzenEstimator::LogPdf(const std::vector<double>& x) const {
  std::vector<double> terms(log_weights_);
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].categorical) {
      const auto k = static_cast<size_t>(dims_[d].n_choices);
      const auto j = static_cast<size_t>(x[d]);
      for (size_t c = 0; c < components_; ++c) terms[c] += log_p_[d][c * k + j];
    } else if (dims_[d].domain.step > 0) {
      for (size_t c = 0; c < components_; ++c) terms[c] += NumericLogKernel(d, c, x[d]);
    } else {  // the common case, in a loop the compiler vectorises
      const double* __restrict mu = mu_[d].data();
      const double* __restrict inv_sigma = inv_sigma_[d].data();
      const double* __restrict log_norm = log_norm_[d].data();
      double* __restrict sum = terms.data();
      const double xd = x[d];
      for (size_t c = 0; c < components_; ++c) {
        const double z = (xd - mu[c]) * inv_sigma[c];
        sum[c] += log_norm[c] - 0.5 * z * z;
      }
    }
  }
  return LogSumExp(terms);
}

std::vector<double> ParzenEstimator::Sample(SplitMix64& rng) const {
  // One component for all dimensions (a joint draw), chosen by weight.
  double u = rng.Uniform(), acc = 0;
  size_t c = prior_;  // should rounding leave u past the last sum
  for (size_t i = 0; i < components_; ++i) {
    acc += weights_[i];
    if (u < acc) {
      c = i;
      break;
    }
  }
  std::vector<double> x(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) {
    const EstimatorDim& dim = dims_[d];
    if (dim.categorical) {
      const auto k = static_cast<size_t>(dim.n_choices);
      double v = rng.Uniform(), a = 0;
      x[d] = static_cast<double>(k - 1);
      for (size_t j = 0; j < k; ++j) {
        a += std::exp(log_p_[d][c * k + j]);
        if (v < a) {
          x[d] = static_cast<double>(j);
          break;
        }
      }
      continue;
    }
    const NumericDomain& dom = dim.domain;
    double v = std::numeric_limits<double>::quiet_NaN();
    for (int tries = 0; tries < 64; ++tries) {  // rejection: mu is inside, so acceptance >= ~1/3
      const double t = mu_[d][c] + sigma_[d][c] * rng.Normal();
      if (t >= dom.low && t <= dom.high) {
        v = t;
        break;
      }
    }
    if (std::isnan(v)) v = dom.low + rng.Uniform() * dom.width();
    if (dom.step > 0) {  // onto the bin centre
      v = dom.low + dom.step / 2 + std::round((v - dom.low - dom.step / 2) / dom.step) * dom.step;
      v = std::min(v, dom.high - dom.step / 2);
    }
    x[d] = v;
  }
  return x;
}

}  // namespace cleansweep
