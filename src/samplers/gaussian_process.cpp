#include "samplers/gaussian_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Cholesky>

#include "samplers/box_lbfgs.hpp"

namespace cleansweep {
namespace {

constexpr double kSqrt5 = 2.23606797749979;
constexpr double kLogSqrt2Pi = 0.9189385332046727;
constexpr double kSqrtHalfPi = 1.2533141373155003;

// Bounds of the fitted parameters, as logs: length scales from 1e-2 to 1e2 of the unit cube,
// signal variance from 1e-2 to 1e2 of the standardised values, noise from kMinNoiseVariance to 1.
constexpr double kLogWLow = -9.210340371976184, kLogWHigh = 9.210340371976184;
constexpr double kLogSignalLow = -4.605170185988091, kLogSignalHigh = 4.605170185988091;
const double kLogNoiseLow = std::log(kMinNoiseVariance);
// At most a tenth of the standardised losses' variance is noise: with more, a model can call the
// few good trials noise, turn flat and send every ask to the box's faces (bench/README.md, "GP").
const double kLogNoiseHigh = std::log(0.1);

// Log priors (docs/samplers.md): log l_d ~ N(sqrt 2 + log(D) / 2 - 1.5, 3), the dimension-scaled
// prior of Hvarfner et al. (2024) centred on length scales e^1.5 = 4.5 times shorter (with theirs,
// the model stayed too smooth over 50-100 trials of 6-10 inputs: bench/README.md, "GP"); log signal
// ~ N(0, 1); the noise variance v by the Gamma(1.1, 30) log density 0.1 log v - 30 v of Optuna's
// GPSampler, whose mode is v = 1/300.
constexpr double kLogLengthSd2 = 3, kLengthShift = 1.5, kNoiseShape = 1.1, kNoiseRate = 30;

double LogLengthMean(int dimensions) { return std::sqrt(2.0) + 0.5 * std::log(std::max(dimensions, 1)) - kLengthShift; }

Eigen::VectorXd Pack(const GpKernel& k) {
  const Eigen::Index d = k.inverse_squared_lengthscales.size();
  Eigen::VectorXd t(d + 2);
  t.head(d) = k.inverse_squared_lengthscales.array().log();
  t[d] = std::log(k.signal_variance);
  t[d + 1] = std::log(k.noise_variance);
  return t;
}

GpKernel Unpack(const Eigen::VectorXd& t) {
  const Eigen::Index d = t.size() - 2;
  GpKernel k;
  k.inverse_squared_lengthscales = t.head(d).array().exp();
  k.signal_variance = std::exp(t[d]);
  k.noise_variance = std::exp(t[d + 1]);
  return k;
}

// Phi(z) / phi(z) for z <= -1, stable into the far tail.
double MillsRatioLow(double z) {
  if (z > -25) return kSqrtHalfPi * std::exp(0.5 * z * z) * std::erfc(-z / std::sqrt(2.0));
  const double u = 1 / (z * z);
  return -(1 - u * (1 - 3 * u * (1 - 5 * u * (1 - 7 * u)))) / z;
}

}  // namespace

GpKernel GpKernel::Default(int dimensions) {
  GpKernel k;
  // w = 1 / l^2 at the prior's median length scale.
  k.inverse_squared_lengthscales = Eigen::VectorXd::Constant(dimensions, std::exp(-2 * LogLengthMean(dimensions)));
  k.signal_variance = 1;
  k.noise_variance = (kNoiseShape - 1) / kNoiseRate;  // the prior's mode
  return k;
}

double Matern52(double r2) {
  const double r = std::sqrt(std::max(r2, 0.0));
  return (1 + kSqrt5 * r + 5.0 / 3.0 * r2) * std::exp(-kSqrt5 * r);
}

double Matern52DerivativeInR2(double r2) {
  const double r = std::sqrt(std::max(r2, 0.0));
  return -5.0 / 6.0 * (1 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
}

double ScaledSquaredDistance(const double* a, const double* b, const Eigen::VectorXd& w,
                             const std::vector<bool>& categorical) {
  double r2 = 0;
  for (size_t d = 0; d < categorical.size(); ++d) {
    const double delta = categorical[d] ? (a[d] != b[d] ? 1.0 : 0.0) : a[d] - b[d];
    r2 += w[static_cast<Eigen::Index>(d)] * delta * delta;
  }
  return r2;
}

GaussianProcess::GaussianProcess(std::vector<bool> categorical, GpKernel kernel)
    : categorical_(std::move(categorical)), kernel_(std::move(kernel)) {}

void GaussianProcess::Reset(GpKernel kernel) {
  kernel_ = std::move(kernel);
  n_ = 0;
}

Eigen::VectorXd GaussianProcess::KernelColumn(const Eigen::VectorXd& x) const {
  Eigen::VectorXd k(n_);
  for (Eigen::Index i = 0; i < n_; ++i) {
    k[i] =
        kernel_.signal_variance *
        Matern52(ScaledSquaredDistance(x_.col(i).data(), x.data(), kernel_.inverse_squared_lengthscales, categorical_));
  }
  return k;
}

void GaussianProcess::Append(const Eigen::VectorXd& x, std::optional<double> noise_variance) {
  if (n_ == x_.cols()) {  // grow the storage geometrically; the factor's top-left block is kept
    const Eigen::Index capacity = std::max<Eigen::Index>(64, 2 * n_);
    Eigen::MatrixXd inputs(dimensions(), capacity), factor(capacity, capacity);
    if (n_ > 0) {  // the first allocation has nothing to keep (and x_ has no rows yet)
      inputs.leftCols(n_) = x_.leftCols(n_);
      factor.topLeftCorner(n_, n_) = l_.topLeftCorner(n_, n_);
    }
    x_.swap(inputs);
    l_.swap(factor);
  }
  const Eigen::VectorXd k = KernelColumn(x);
  Eigen::VectorXd row = k;
  if (n_ > 0) l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(row);
  const double noise = std::max(noise_variance.value_or(kernel_.noise_variance), kMinNoiseVariance);
  const double diagonal = kernel_.signal_variance + noise - row.squaredNorm();
  // Rounding can leave a duplicate's pivot just below its noise; the noise is its floor in exact
  // arithmetic, so a tenth of it is a safe floor here.
  const double pivot = std::sqrt(std::max(diagonal, 0.1 * noise));
  x_.col(n_) = x;
  l_.row(n_).head(n_) = row.transpose();
  l_(n_, n_) = pivot;
  ++n_;
}

double GaussianProcess::AppendAtMean(const Eigen::VectorXd& x) {
  const double mean = n_ > 0 ? KernelColumn(x).dot(alpha_.head(n_)) : 0.0;
  Append(x, kMinNoiseVariance);
  // (K+)[alpha; 0] = [K alpha; k'alpha] = [y; mean]: the old weights and a zero solve the new system.
  y_.conservativeResize(n_);
  y_[n_ - 1] = mean;
  alpha_.conservativeResize(n_);
  alpha_[n_ - 1] = 0;
  return mean;
}

void GaussianProcess::Truncate(Eigen::Index n) { n_ = std::min(n, n_); }

void GaussianProcess::SetTargets(const Eigen::VectorXd& y) {
  y_ = y;
  alpha_ = y;
  const auto l = l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>();
  l.solveInPlace(alpha_);
  l.transpose().solveInPlace(alpha_);
}

Eigen::MatrixXd GaussianProcess::Cross(const Eigen::MatrixXd& points) const {
  // The continuous inputs' part of the distances as one matrix product of the scaled inputs
  // (|a|^2 + |b|^2 - 2 a.b); the categorical ones by comparison.
  const Eigen::Index m = points.cols();
  const Eigen::VectorXd& w = kernel_.inverse_squared_lengthscales;
  std::vector<Eigen::Index> continuous, categorical;
  for (size_t d = 0; d < categorical_.size(); ++d) {
    (categorical_[d] ? categorical : continuous).push_back(static_cast<Eigen::Index>(d));
  }
  const auto scaled = [&](const Eigen::Ref<const Eigen::MatrixXd>& x) {
    Eigen::MatrixXd z(static_cast<Eigen::Index>(continuous.size()), x.cols());
    for (size_t k = 0; k < continuous.size(); ++k) {
      z.row(static_cast<Eigen::Index>(k)) = std::sqrt(w[continuous[k]]) * x.row(continuous[k]);
    }
    return z;
  };
  const Eigen::MatrixXd a = scaled(x_.leftCols(n_)), b = scaled(points);
  Eigen::MatrixXd r2 = -2 * (a.transpose() * b);
  r2.colwise() += a.colwise().squaredNorm().transpose();
  r2.rowwise() += b.colwise().squaredNorm();
  r2 = r2.cwiseMax(0);
  for (const Eigen::Index d : categorical) {
    for (Eigen::Index j = 0; j < m; ++j) {
      const double p = points(d, j);
      for (Eigen::Index i = 0; i < n_; ++i) r2(i, j) += x_(d, i) != p ? w[d] : 0.0;
    }
  }
  const Eigen::ArrayXXd r = r2.array().sqrt();
  return (kernel_.signal_variance * (1 + kSqrt5 * r + 5.0 / 3.0 * r2.array()) * (-kSqrt5 * r).exp()).matrix();
}

namespace {
constexpr Eigen::Index kColumnBlock = 128;
}  // namespace

GaussianProcess::Screened GaussianProcess::Screen(const Eigen::MatrixXd& points) const {
  const Eigen::Index m = points.cols();
  const double s2 = kernel_.signal_variance;
  Screened s;
  s.mean.resize(m);
  s.variance_bound.setConstant(m, s2);
  for (Eigen::Index c0 = 0; c0 < m && n_ > 0; c0 += kColumnBlock) {
    const Eigen::Index nc = std::min(kColumnBlock, m - c0);
    const Eigen::MatrixXd cross = Cross(points.middleCols(c0, nc));
    s.mean.segment(c0, nc).noalias() = cross.transpose() * alpha_;
    const Eigen::ArrayXd nearest = cross.colwise().maxCoeff().transpose().array();
    s.variance_bound.segment(c0, nc) = (s2 - nearest.square() / (s2 + kernel_.noise_variance)).cwiseMax(1e-12 * s2);
  }
  if (n_ == 0) s.mean.setZero();
  return s;
}

double GaussianProcess::Variance(const Eigen::VectorXd& x) const {
  Eigen::VectorXd v = KernelColumn(x);
  if (n_ > 0) l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(v);
  return std::max(kernel_.signal_variance - v.squaredNorm(), 1e-12 * kernel_.signal_variance);
}

std::vector<std::pair<Eigen::Index, double>> GaussianProcess::Variances(
    const Eigen::MatrixXd& points, const Eigen::VectorXd& bounds, const std::vector<Eigen::Index>& all_columns,
    const std::function<bool(Eigen::Index, double)>& keep) const {
  constexpr Eigen::Index kBlock = 64;
  const double s2 = kernel_.signal_variance, floor = 1e-12 * s2;
  std::vector<std::pair<Eigen::Index, double>> out;
  for (size_t c0 = 0; c0 < all_columns.size(); c0 += static_cast<size_t>(kColumnBlock)) {
    std::vector<Eigen::Index> columns(
        all_columns.begin() + static_cast<std::ptrdiff_t>(c0),
        all_columns.begin() +
            static_cast<std::ptrdiff_t>(std::min(all_columns.size(), c0 + static_cast<size_t>(kColumnBlock))));
    Eigen::MatrixXd chosen(points.rows(), static_cast<Eigen::Index>(columns.size()));
    for (size_t c = 0; c < columns.size(); ++c) chosen.col(static_cast<Eigen::Index>(c)) = points.col(columns[c]);
    Eigen::MatrixXd v = Cross(chosen);
    Eigen::VectorXd explained = Eigen::VectorXd::Zero(v.cols());  // sum of v_i^2 over the rows solved
    for (Eigen::Index r0 = 0; r0 < n_ && v.cols() > 0; r0 += kBlock) {
      const Eigen::Index nb = std::min(kBlock, n_ - r0);
      if (r0 > 0) v.middleRows(r0, nb).noalias() -= l_.block(r0, 0, nb, r0) * v.topRows(r0);
      l_.block(r0, r0, nb, nb).triangularView<Eigen::Lower>().solveInPlace(v.middleRows(r0, nb));
      explained += v.middleRows(r0, nb).colwise().squaredNorm().transpose();
      if (r0 + nb == n_) break;
      // Drop the columns whose bound says they cannot matter; compact the rest.
      Eigen::Index kept = 0;
      for (Eigen::Index c = 0; c < v.cols(); ++c) {
        const Eigen::Index column = columns[static_cast<size_t>(c)];
        if (!keep(column, std::min(std::max(s2 - explained[c], floor), bounds[column]))) continue;
        if (kept != c) {
          v.col(kept) = v.col(c);
          explained[kept] = explained[c];
          columns[static_cast<size_t>(kept)] = column;
        }
        ++kept;
      }
      if (kept < v.cols()) {
        v.conservativeResize(Eigen::NoChange, kept);
        explained.conservativeResize(kept);
        columns.resize(static_cast<size_t>(kept));
      }
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      out.emplace_back(columns[c], std::max(s2 - explained[static_cast<Eigen::Index>(c)], floor));
    }
  }
  return out;
}

void GaussianProcess::Predict(const Eigen::MatrixXd& points, Eigen::VectorXd* mean, Eigen::VectorXd* variance) const {
  Eigen::MatrixXd k = Cross(points);
  *mean = k.transpose() * alpha_;
  if (n_ > 0) l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(k);
  *variance = (kernel_.signal_variance - k.colwise().squaredNorm().transpose().array())
                  .cwiseMax(1e-12 * kernel_.signal_variance);
}

void GaussianProcess::PredictWithGradient(const Eigen::VectorXd& x, double* mean, double* variance,
                                          Eigen::VectorXd* mean_gradient, Eigen::VectorXd* variance_gradient) const {
  const Eigen::Index dims = dimensions();
  Eigen::VectorXd k(n_);
  Eigen::MatrixXd dk(n_, dims);  // d k(X_i, x) / d x_d
  const Eigen::VectorXd& w = kernel_.inverse_squared_lengthscales;
  for (Eigen::Index i = 0; i < n_; ++i) {
    const double r2 = ScaledSquaredDistance(x_.col(i).data(), x.data(), w, categorical_);
    k[i] = kernel_.signal_variance * Matern52(r2);
    const double slope = kernel_.signal_variance * Matern52DerivativeInR2(r2);
    for (Eigen::Index d = 0; d < dims; ++d) {
      dk(i, d) = categorical_[static_cast<size_t>(d)] ? 0.0 : slope * 2 * w[d] * (x[d] - x_(d, i));
    }
  }
  *mean = k.dot(alpha_);
  *mean_gradient = dk.transpose() * alpha_;
  Eigen::VectorXd v = k;
  const auto l = l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>();
  l.solveInPlace(v);
  const double raw = kernel_.signal_variance - v.squaredNorm();
  const double floor = 1e-12 * kernel_.signal_variance;
  *variance = std::max(raw, floor);
  l.transpose().solveInPlace(v);  // (K + noise I)^-1 k
  *variance_gradient = raw > floor ? Eigen::VectorXd(-2 * (dk.transpose() * v)) : Eigen::VectorXd::Zero(dims);
}

double KernelLogPosterior(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& y, const std::vector<bool>& categorical,
                          const GpKernel& kernel, Eigen::VectorXd* gradient) {
  const Eigen::Index n = inputs.cols(), dims = inputs.rows();
  const Eigen::VectorXd& w = kernel.inverse_squared_lengthscales;
  Eigen::MatrixXd r2(n, n), k(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = j; i < n; ++i) {
      r2(i, j) = r2(j, i) = ScaledSquaredDistance(inputs.col(i).data(), inputs.col(j).data(), w, categorical);
      k(i, j) = k(j, i) = kernel.signal_variance * Matern52(r2(i, j));
    }
  }
  Eigen::MatrixXd noisy = k;
  noisy.diagonal().array() += kernel.noise_variance;
  const Eigen::LLT<Eigen::MatrixXd> llt(noisy);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd alpha = llt.solve(y);
  const double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
  double value = -0.5 * y.dot(alpha) - 0.5 * log_det - static_cast<double>(n) * kLogSqrt2Pi;
  // Priors, in the log parameters.
  const double length_mean = LogLengthMean(static_cast<int>(dims));
  const Eigen::VectorXd theta = Pack(kernel);
  for (Eigen::Index d = 0; d < dims; ++d) {
    const double u = -0.5 * theta[d] - length_mean;  // log l_d minus its prior mean
    value -= u * u / (2 * kLogLengthSd2);
  }
  value -= 0.5 * theta[dims] * theta[dims];
  value += (kNoiseShape - 1) * theta[dims + 1] - kNoiseRate * kernel.noise_variance;
  if (gradient) {
    // d/dθ of the likelihood: tr(W dK/dθ) / 2 with W = alpha alpha^T - (K + noise I)^-1.
    Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(n, n));
    const Eigen::MatrixXd weight = alpha * alpha.transpose() - inverse;
    gradient->setZero(dims + 2);
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = 0; i < n; ++i) {
        if (i == j) continue;
        const double common = 0.5 * weight(i, j) * kernel.signal_variance * Matern52DerivativeInR2(r2(i, j));
        for (Eigen::Index d = 0; d < dims; ++d) {
          const double a = inputs(d, i), b = inputs(d, j);
          const double delta = categorical[static_cast<size_t>(d)] ? (a != b ? 1.0 : 0.0) : a - b;
          (*gradient)[d] += common * w[d] * delta * delta;
        }
      }
    }
    (*gradient)[dims] = 0.5 * (weight.array() * k.array()).sum();
    (*gradient)[dims + 1] = 0.5 * kernel.noise_variance * weight.trace();
    for (Eigen::Index d = 0; d < dims; ++d) (*gradient)[d] += 0.5 * (-0.5 * theta[d] - length_mean) / kLogLengthSd2;
    (*gradient)[dims] -= theta[dims];
    (*gradient)[dims + 1] += (kNoiseShape - 1) - kNoiseRate * kernel.noise_variance;
  }
  return value;
}

GpKernel FitKernel(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& y, const std::vector<bool>& categorical,
                   const GpKernel& warm, const GpFitOptions& options) {
  const Eigen::Index dims = inputs.rows();
  Eigen::VectorXd lower(dims + 2), upper(dims + 2);
  lower.head(dims).setConstant(kLogWLow);
  upper.head(dims).setConstant(kLogWHigh);
  lower[dims] = kLogSignalLow;
  upper[dims] = kLogSignalHigh;
  lower[dims + 1] = kLogNoiseLow;
  upper[dims + 1] = options.deterministic ? kLogNoiseLow : kLogNoiseHigh;
  const Objective negative = [&](const Eigen::VectorXd& t, Eigen::VectorXd* g) {
    const double v = KernelLogPosterior(inputs, y, categorical, Unpack(t), g);
    *g = -*g;
    return -v;
  };
  BoxLbfgsOptions lbfgs;
  lbfgs.max_iterations = options.max_iterations;
  lbfgs.projected_gradient_tol = 1e-3;
  lbfgs.relative_f_tol = 1e-7;
  BoxLbfgsResult best;
  best.f = std::numeric_limits<double>::infinity();
  for (const GpKernel& start : {warm, GpKernel::Default(static_cast<int>(dims))}) {
    if (start.inverse_squared_lengthscales.size() != dims) continue;
    BoxLbfgsResult r = MinimizeInBox(negative, Pack(start), lower, upper, lbfgs);
    if (r.f < best.f) best = std::move(r);
  }
  if (!std::isfinite(best.f)) {  // nothing fitted (cannot happen with the noise floor): the default
    GpKernel k = GpKernel::Default(static_cast<int>(dims));
    if (options.deterministic) k.noise_variance = kMinNoiseVariance;
    return k;
  }
  return Unpack(best.x);
}

double LogExpectedImprovement(double mean, double variance, double best, double* d_mean, double* d_variance) {
  const double sigma = std::sqrt(variance);
  const double z = (best - mean) / sigma;
  // EI = sigma h(z), h(z) = z Phi(z) + phi(z); phi_over_h = phi(z) / h(z), cdf_over_h = Phi / h.
  double log_h, phi_over_h, cdf_over_h;
  const double log_phi = -0.5 * z * z - kLogSqrt2Pi;
  if (z > -1) {
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0)), pdf = std::exp(log_phi);
    const double h = z * cdf + pdf;
    log_h = std::log(h);
    phi_over_h = pdf / h;
    cdf_over_h = cdf / h;
  } else {
    const double r = MillsRatioLow(z);  // Phi / phi
    double q;                           // h / phi = 1 + z r, computed without cancellation far out
    if (z > -20) {
      q = 1 + z * r;
    } else {  // 1/z^2 - 3/z^4 + 15/z^6 - ...: its seventh term is below 1e-10 of the first here
      const double u = 1 / (z * z);
      q = u * (1 - 3 * u * (1 - 5 * u * (1 - 7 * u * (1 - 9 * u * (1 - 11 * u)))));
    }
    log_h = log_phi + std::log(q);
    phi_over_h = 1 / q;
    cdf_over_h = r / q;
  }
  if (d_mean) *d_mean = -cdf_over_h / sigma;
  if (d_variance) *d_variance = phi_over_h / sigma / (2 * sigma);
  return std::log(sigma) + log_h;
}

double LogProbabilityBelowZero(double mean, double variance, double* d_mean, double* d_variance) {
  const double sigma = std::sqrt(variance);
  const double t = -mean / sigma;
  double log_cdf, phi_over_cdf;  // log Phi(t), phi(t) / Phi(t)
  if (t > -1) {
    const double cdf = 0.5 * std::erfc(-t / std::sqrt(2.0));
    log_cdf = std::log(cdf);
    phi_over_cdf = std::exp(-0.5 * t * t - kLogSqrt2Pi) / cdf;
  } else {
    const double r = MillsRatioLow(t);
    log_cdf = -0.5 * t * t - kLogSqrt2Pi + std::log(r);
    phi_over_cdf = 1 / r;
  }
  if (d_mean) *d_mean = -phi_over_cdf / sigma;
  if (d_variance) *d_variance = phi_over_cdf * (-t / sigma) / (2 * sigma);
  return log_cdf;
}

}  // namespace cleansweep
