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
    : dims_(std::move(dims)), components_(rows.size() + 1) {
  weights_ = weights;
  weights_.push_back(prior_weight);
  const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= total;
  for (double w : weights_) log_weights_.push_back(std::log(std::max(w, kTiny)));
  mu_.resize(dims_.size());
  sigma_.resize(dims_.size());
  log_z_.resize(dims_.size());
  log_norm_.resize(dims_.size());
  log_step_.resize(dims_.size());
  log_p_.resize(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (!dims_[d].categorical) {
      FitNumeric(d, rows);
      continue;
    }
    // Each observation: its own choice plus prior_weight / kernels on every choice, normalised, so
    // kernels sharpen as observations accumulate; the prior component is uniform.
    const int k = dims_[d].n_choices;
    const double fill = prior_weight / static_cast<double>(components_);
    std::vector<double>& lp = log_p_[d];
    lp.assign(components_ * static_cast<size_t>(k), 0.0);
    for (size_t c = 0; c < components_; ++c) {
      const bool prior = c + 1 == components_;
      const double mass = (prior ? 0.0 : 1.0) + fill * k;
      for (int j = 0; j < k; ++j) {
        const bool own = !prior && static_cast<int>(rows[c][d]) == j;
        lp[c * static_cast<size_t>(k) + static_cast<size_t>(j)] = std::log(((own ? 1.0 : 0.0) + fill) / mass);
      }
    }
  }
}

void ParzenEstimator::FitNumeric(size_t d, const std::vector<std::vector<double>>& rows) {
  const NumericDomain& dom = dims_[d].domain;
  const size_t n = rows.size();
  const double range = dom.width();
  std::vector<double>& mu = mu_[d];
  std::vector<double>& sigma = sigma_[d];
  mu.resize(components_);
  sigma.resize(components_);
  for (size_t i = 0; i < n; ++i) mu[i] = rows[i][d];
  mu[n] = 0.5 * (dom.low + dom.high);  // the prior
  const double min_sigma = range / std::min(100.0, 1.0 + static_cast<double>(components_));
  // Distance to the farther of the two neighbours (prior included), clipped to [min, range].
  std::vector<size_t> order(components_);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mu[a] < mu[b]; });
  for (size_t r = 0; r < components_; ++r) {
    const double left = r > 0 ? mu[order[r]] - mu[order[r - 1]] : 0;
    const double right = r + 1 < components_ ? mu[order[r + 1]] - mu[order[r]] : 0;
    sigma[order[r]] = std::clamp(std::max(left, right), min_sigma, range);
  }
  sigma[n] = range;  // the prior is broad whatever its neighbours
  log_z_[d].resize(components_);
  log_norm_[d].resize(components_);
  log_step_[d] = dom.step > 0 ? std::log(dom.step) : 0;
  for (size_t c = 0; c < components_; ++c) {
    log_z_[d][c] = LogNormalMass((dom.low - mu[c]) / sigma[c], (dom.high - mu[c]) / sigma[c]);
    log_norm_[d][c] = -kLogSqrt2Pi - std::log(sigma[c]) - log_z_[d][c];
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
    } else {
      for (size_t c = 0; c < components_; ++c) terms[c] += NumericLogKernel(d, c, x[d]);
    }
  }
  return LogSumExp(terms);
}

std::vector<double> ParzenEstimator::Sample(SplitMix64& rng) const {
  // One component for all dimensions (a joint draw), chosen by weight.
  double u = rng.Uniform(), acc = 0;
  size_t c = components_ - 1;
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
