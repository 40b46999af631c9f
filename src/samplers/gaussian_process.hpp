// A Gaussian-process regression model for the GP sampler (docs/samplers.md, "gp"): a Matern-5/2
// kernel with one length scale per input (ARD), a signal variance and a noise variance, fitted to
// standardised values by maximising the marginal likelihood plus log priors. Inputs live in the
// unit cube; a categorical input holds a choice index, and two points differ in it by 0 or 1
// (the Hamming distance), as in Optuna's GPSampler. Pure numerics: no search space, no trials.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "util/random.hpp"

namespace cleansweep {

struct GpKernel {
  Eigen::VectorXd inverse_squared_lengthscales;  // w_d = 1 / l_d^2, one per input
  double signal_variance = 1;
  double noise_variance = 1e-2;

  // The prior's mode-ish start for `dimensions` inputs.
  static GpKernel Default(int dimensions);
};

// The smallest noise variance a fit may reach (standardised units): it keeps the kernel matrix
// positive definite when two trials share their parameters.
constexpr double kMinNoiseVariance = 1e-6;

// Matern-5/2 of a squared scaled distance r2, without the signal variance, and its derivative in r2.
double Matern52(double r2);
double Matern52DerivativeInR2(double r2);

// Squared scaled distance of two inputs: sum over d of w_d (a_d - b_d)^2, with (a_d != b_d) in
// place of the difference where `categorical[d]`.
double ScaledSquaredDistance(const double* a, const double* b, const Eigen::VectorXd& w,
                             const std::vector<bool>& categorical);

// The model. Points are added one at a time (an O(n^2) extension of the Cholesky factor), or
// dropped from the end, so that a history that grows costs no refactorisation; Reset() starts over
// with other kernel parameters.
class GaussianProcess {
 public:
  GaussianProcess(std::vector<bool> categorical, GpKernel kernel);

  int dimensions() const { return static_cast<int>(categorical_.size()); }
  Eigen::Index size() const { return n_; }
  const GpKernel& kernel() const { return kernel_; }
  const std::vector<bool>& categorical() const { return categorical_; }

  void Reset(GpKernel kernel);  // no points, these kernel parameters
  // One more training input; `noise_variance` (default: the kernel's) is its own, so a fantasy
  // can be an exact observation of the posterior mean.
  void Append(const Eigen::VectorXd& x, std::optional<double> noise_variance = std::nullopt);
  // One more input observed exactly at the posterior mean there (a "kriging believer" fantasy):
  // the mean stays what it was everywhere, so the new input's weight in (K + noise I)^-1 y is 0 and
  // the targets need no solve: O(n^2) for the factor's new row, against SetTargets' two solves.
  // Returns that mean. The targets must be set.
  double AppendAtMean(const Eigen::VectorXd& x);
  void Truncate(Eigen::Index n);  // keep the first n inputs
  // The targets (standardised values) of the current inputs, in order; must be called after the
  // inputs change and before a prediction.
  void SetTargets(const Eigen::VectorXd& y);
  const Eigen::VectorXd& targets() const { return y_; }

  // Posterior mean and variance of the latent function at each column of `points` (dimensions x m).
  void Predict(const Eigen::MatrixXd& points, Eigen::VectorXd* mean, Eigen::VectorXd* variance) const;
  // The same at one point, with their gradients in x (0 in categorical inputs).
  void PredictWithGradient(const Eigen::VectorXd& x, double* mean, double* variance, Eigen::VectorXd* mean_gradient,
                           Eigen::VectorXd* variance_gradient) const;

  // For sweeping many candidates: the posterior mean at each column of `points`, and an upper
  // bound of each one's variance, the variance given only its nearest input, which costs no
  // solve. Variances() then gives the exact variances of the few candidates whose bound says they
  // may be the best. Both work through the candidates in blocks, so that their temporaries stay
  // small (fresh pages are costly on virtual machines).
  struct Screened {
    Eigen::VectorXd mean, variance_bound;
  };
  Screened Screen(const Eigen::MatrixXd& points) const;
  double Variance(const Eigen::VectorXd& x) const;
  // Exact variances of `columns` of `points`, by forward substitution in blocks of rows: after
  // each block the variance given the inputs so far bounds the exact one from above (as does
  // `bounds`), and `keep(column, bound)` may drop a column that cannot matter any more. The
  // survivors' exact variances, by column.
  std::vector<std::pair<Eigen::Index, double>> Variances(
      const Eigen::MatrixXd& points, const Eigen::VectorXd& bounds, const std::vector<Eigen::Index>& columns,
      const std::function<bool(Eigen::Index column, double variance_bound)>& keep) const;

  Eigen::Ref<const Eigen::MatrixXd> inputs() const { return x_.leftCols(n_); }

 private:
  Eigen::VectorXd KernelColumn(const Eigen::VectorXd& x) const;  // k(X_i, x), i < n
  Eigen::MatrixXd Cross(const Eigen::MatrixXd& points) const;    // k(X_i, points_j)

  std::vector<bool> categorical_;
  GpKernel kernel_;
  Eigen::Index n_ = 0;
  Eigen::MatrixXd x_;          // dimensions x capacity, inputs as columns
  Eigen::MatrixXd l_;          // capacity x capacity, lower Cholesky factor of K + noise I in its top-left n x n
  Eigen::VectorXd y_, alpha_;  // targets and (K + noise I)^-1 y
};

// How a kernel is fitted: which parameters are free, and the log priors on them.
struct GpFitOptions {
  bool deterministic = false;  // noise held at kMinNoiseVariance (an objective without noise)
  int max_iterations = 60;     // L-BFGS iterations per start
};

// The log marginal likelihood of standardised `y` at `inputs` (dimensions x n) plus the log priors
// of `kernel`; with `gradient`, its gradient in (log w_1 .. log w_D, log signal, log noise).
double KernelLogPosterior(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& y, const std::vector<bool>& categorical,
                          const GpKernel& kernel, Eigen::VectorXd* gradient);

// The kernel parameters that maximise KernelLogPosterior, from `warm` and from the default start
// (the better of the two), inside fixed bounds (docs/samplers.md).
GpKernel FitKernel(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& y, const std::vector<bool>& categorical,
                   const GpKernel& warm, const GpFitOptions& options);

// log E[max(best - f, 0)] for f ~ N(mean, variance) (minimisation), stable far into the tail,
// and its derivatives in mean and variance.
double LogExpectedImprovement(double mean, double variance, double best, double* d_mean = nullptr,
                              double* d_variance = nullptr);
// log P(f <= 0) for f ~ N(mean, variance), and its derivatives.
double LogProbabilityBelowZero(double mean, double variance, double* d_mean = nullptr, double* d_variance = nullptr);

}  // namespace cleansweep
