#include "samplers/gaussian_process.hpp"

#include <cmath>

#include <gtest/gtest.h>
#include <Eigen/Cholesky>

#include "samplers/box_lbfgs.hpp"
#include "util/random.hpp"

namespace cleansweep {
namespace {

// Three inputs, the last categorical with four choices.
const std::vector<bool> kCategorical = {false, false, true};

Eigen::MatrixXd RandomInputs(int n, SplitMix64& rng) {
  Eigen::MatrixXd x(3, n);
  for (int j = 0; j < n; ++j) {
    x(0, j) = rng.Uniform();
    x(1, j) = rng.Uniform();
    x(2, j) = static_cast<double>(rng.Below(4));
  }
  return x;
}

GpKernel SomeKernel() {
  GpKernel k;
  k.inverse_squared_lengthscales = Eigen::Vector3d(4.0, 0.7, 1.3);
  k.signal_variance = 1.7;
  k.noise_variance = 0.03;
  return k;
}

Eigen::MatrixXd DenseKernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, const GpKernel& k) {
  Eigen::MatrixXd out(a.cols(), b.cols());
  for (Eigen::Index i = 0; i < a.cols(); ++i) {
    for (Eigen::Index j = 0; j < b.cols(); ++j) {
      double r2 = 0;
      for (Eigen::Index d = 0; d < 3; ++d) {
        const double delta = kCategorical[static_cast<size_t>(d)] ? double(a(d, i) != b(d, j)) : a(d, i) - b(d, j);
        r2 += k.inverse_squared_lengthscales[d] * delta * delta;
      }
      const double r = std::sqrt(r2);
      out(i, j) = k.signal_variance * (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r2) * std::exp(-std::sqrt(5.0) * r);
    }
  }
  return out;
}

// The posterior as a textbook computes it: one dense solve, no incremental factor.
void DensePosterior(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const GpKernel& k, const Eigen::MatrixXd& at,
                    Eigen::VectorXd* mean, Eigen::VectorXd* variance) {
  Eigen::MatrixXd kxx = DenseKernel(x, x, k);
  kxx.diagonal().array() += k.noise_variance;
  const Eigen::MatrixXd ks = DenseKernel(x, at, k);
  const Eigen::LDLT<Eigen::MatrixXd> solve(kxx);
  *mean = ks.transpose() * solve.solve(y);
  *variance = (DenseKernel(at, at, k).diagonal() - (ks.transpose() * solve.solve(ks)).diagonal());
}

TEST(GaussianProcess, PosteriorEqualsTheDenseComputation) {
  SplitMix64 rng(7);
  const Eigen::MatrixXd x = RandomInputs(60, rng), at = RandomInputs(25, rng);
  Eigen::VectorXd y(60);
  for (int i = 0; i < 60; ++i) y[i] = std::sin(5 * x(0, i)) + x(1, i) * x(2, i) + 0.1 * rng.Normal();
  GaussianProcess gp(kCategorical, SomeKernel());
  for (int i = 0; i < 60; ++i) gp.Append(x.col(i));
  gp.SetTargets(y);
  Eigen::VectorXd mean, variance, dense_mean, dense_variance;
  gp.Predict(at, &mean, &variance);
  DensePosterior(x, y, SomeKernel(), at, &dense_mean, &dense_variance);
  for (Eigen::Index j = 0; j < at.cols(); ++j) {
    EXPECT_NEAR(mean[j], dense_mean[j], 1e-8);
    EXPECT_NEAR(variance[j], dense_variance[j], 1e-8);
    double m1, v1;
    Eigen::VectorXd dm, dv;
    gp.PredictWithGradient(at.col(j), &m1, &v1, &dm, &dv);
    EXPECT_NEAR(m1, dense_mean[j], 1e-8);
    EXPECT_NEAR(v1, dense_variance[j], 1e-8);
  }
  // Dropping the last 20 inputs and extending with others is the dense posterior of the new set.
  gp.Truncate(40);
  const Eigen::MatrixXd others = RandomInputs(15, rng);
  Eigen::MatrixXd x2(3, 55);
  x2 << x.leftCols(40), others;
  for (int i = 0; i < 15; ++i) gp.Append(others.col(i));
  Eigen::VectorXd y2(55);
  y2 << y.head(40), Eigen::VectorXd::LinSpaced(15, -1, 1);
  gp.SetTargets(y2);
  gp.Predict(at, &mean, &variance);
  DensePosterior(x2, y2, SomeKernel(), at, &dense_mean, &dense_variance);
  EXPECT_LT((mean - dense_mean).lpNorm<Eigen::Infinity>(), 1e-8);
  EXPECT_LT((variance - dense_variance).lpNorm<Eigen::Infinity>(), 1e-8);
}

// Fantasies (docs/samplers.md, "Many workers"): inputs observed at the posterior mean, added
// without a solve, give the posterior of a dense computation with those targets; the mean does
// not move anywhere and the variance at a fantasy falls to the noise floor.
TEST(GaussianProcess, AppendAtMeanIsTheDensePosteriorWithTheMeanObservedExactly) {
  SplitMix64 rng(11);
  const Eigen::MatrixXd x = RandomInputs(40, rng), fantasies = RandomInputs(12, rng), at = RandomInputs(20, rng);
  Eigen::VectorXd y(40);
  for (int i = 0; i < 40; ++i) y[i] = std::cos(4 * x(0, i)) - x(1, i) + 0.1 * rng.Normal();
  GaussianProcess gp(kCategorical, SomeKernel());
  for (int i = 0; i < 40; ++i) gp.Append(x.col(i));
  gp.SetTargets(y);
  Eigen::VectorXd before, before_variance;
  gp.Predict(at, &before, &before_variance);
  Eigen::VectorXd fantasy_means(12);
  for (int i = 0; i < 12; ++i) fantasy_means[i] = gp.AppendAtMean(fantasies.col(i));
  ASSERT_EQ(gp.size(), 52);
  ASSERT_EQ(gp.targets().size(), 52);
  // The same model built by the long way: appended with the floor noise, targets solved for.
  GaussianProcess slow(kCategorical, SomeKernel());
  for (int i = 0; i < 40; ++i) slow.Append(x.col(i));
  for (int i = 0; i < 12; ++i) slow.Append(fantasies.col(i), kMinNoiseVariance);
  slow.SetTargets(gp.targets());
  Eigen::VectorXd mean, variance, slow_mean, slow_variance;
  gp.Predict(at, &mean, &variance);
  slow.Predict(at, &slow_mean, &slow_variance);
  EXPECT_LT((mean - slow_mean).lpNorm<Eigen::Infinity>(), 1e-8);
  EXPECT_LT((variance - slow_variance).lpNorm<Eigen::Infinity>(), 1e-8);
  EXPECT_LT((mean - before).lpNorm<Eigen::Infinity>(), 1e-8);  // kriging believer: the mean stays
  EXPECT_TRUE((variance.array() <= before_variance.array() + 1e-12).all());
  gp.Predict(fantasies, &mean, &variance);
  EXPECT_LT((mean - fantasy_means).lpNorm<Eigen::Infinity>(), 1e-8);
  EXPECT_LT(variance.maxCoeff(), 1e-5);
}

TEST(GaussianProcess, PosteriorGradientsMatchFiniteDifferences) {
  SplitMix64 rng(3);
  const Eigen::MatrixXd x = RandomInputs(30, rng);
  GaussianProcess gp(kCategorical, SomeKernel());
  Eigen::VectorXd y(30);
  for (int i = 0; i < 30; ++i) {
    gp.Append(x.col(i));
    y[i] = std::cos(4 * x(0, i)) - x(1, i);
  }
  gp.SetTargets(y);
  const Eigen::Vector3d at(0.37, 0.61, 2);
  double mean, variance;
  Eigen::VectorXd dm, dv;
  gp.PredictWithGradient(at, &mean, &variance, &dm, &dv);
  EXPECT_EQ(dm[2], 0) << "no gradient in a categorical input";
  for (int d = 0; d < 2; ++d) {
    const double h = 1e-6;
    Eigen::Vector3d up = at, down = at;
    up[d] += h;
    down[d] -= h;
    Eigen::VectorXd mu, vu, md, vd;
    gp.Predict(up, &mu, &vu);
    gp.Predict(down, &md, &vd);
    EXPECT_NEAR(dm[d], (mu[0] - md[0]) / (2 * h), 1e-6 * std::max(1.0, std::abs(dm[d])));
    EXPECT_NEAR(dv[d], (vu[0] - vd[0]) / (2 * h), 1e-6 * std::max(1.0, std::abs(dv[d])));
  }
}

TEST(GaussianProcess, KernelGradientMatchesFiniteDifferences) {
  SplitMix64 rng(11);
  const Eigen::MatrixXd x = RandomInputs(40, rng);
  Eigen::VectorXd y(40);
  for (int i = 0; i < 40; ++i) y[i] = std::sin(6 * x(0, i)) + 0.3 * x(2, i) + 0.05 * rng.Normal();
  const GpKernel k = SomeKernel();
  Eigen::VectorXd gradient;
  const double value = KernelLogPosterior(x, y, kCategorical, k, &gradient);
  ASSERT_TRUE(std::isfinite(value));
  ASSERT_EQ(gradient.size(), 5);
  // Parameter j of the gradient is in the log of: w_0, w_1, w_2, the signal, the noise.
  const auto moved = [&](int j, double by) {
    GpKernel m = k;
    if (j < 3) m.inverse_squared_lengthscales[j] *= std::exp(by);
    if (j == 3) m.signal_variance *= std::exp(by);
    if (j == 4) m.noise_variance *= std::exp(by);
    return KernelLogPosterior(x, y, kCategorical, m, nullptr);
  };
  for (int j = 0; j < 5; ++j) {
    const double h = 1e-5;
    const double numeric = (moved(j, h) - moved(j, -h)) / (2 * h);
    EXPECT_NEAR(gradient[j], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "parameter " << j;
  }
}

TEST(GaussianProcess, FitFindsWhichInputMatters) {
  // y depends on input 0 only, quickly; input 1 is noise-free irrelevant.
  SplitMix64 rng(5);
  const std::vector<bool> continuous = {false, false};
  Eigen::MatrixXd x(2, 50);
  Eigen::VectorXd y(50);
  for (int i = 0; i < 50; ++i) {
    x(0, i) = rng.Uniform();
    x(1, i) = rng.Uniform();
    y[i] = std::sin(8 * x(0, i));
  }
  y = (y.array() - y.mean()) / std::sqrt((y.array() - y.mean()).square().mean());
  const GpKernel fitted = FitKernel(x, y, continuous, GpKernel::Default(2), {});
  EXPECT_GT(fitted.inverse_squared_lengthscales[0], 30 * fitted.inverse_squared_lengthscales[1]);
  EXPECT_LT(fitted.noise_variance, 0.01) << "a noise-free function";
  EXPECT_GT(KernelLogPosterior(x, y, continuous, fitted, nullptr),
            KernelLogPosterior(x, y, continuous, GpKernel::Default(2), nullptr));
  GpFitOptions deterministic;
  deterministic.deterministic = true;
  EXPECT_DOUBLE_EQ(FitKernel(x, y, continuous, fitted, deterministic).noise_variance, kMinNoiseVariance);
}

TEST(GaussianProcess, DuplicateInputsKeepTheFactorFinite) {
  GaussianProcess gp({false}, GpKernel::Default(1));
  GpKernel k = GpKernel::Default(1);
  k.noise_variance = kMinNoiseVariance;
  gp.Reset(k);
  for (int i = 0; i < 200; ++i) gp.Append(Eigen::VectorXd::Constant(1, 0.25));
  gp.SetTargets(Eigen::VectorXd::Constant(200, 1.0));
  Eigen::VectorXd mean, variance;
  gp.Predict(Eigen::RowVector3d(0.25, 0.5, 1.0), &mean, &variance);
  EXPECT_TRUE(mean.allFinite() && variance.allFinite());
  EXPECT_NEAR(mean[0], 1.0, 1e-3);
  EXPECT_GT(variance.minCoeff(), 0);
}

TEST(LogExpectedImprovement, EqualsTheClosedFormAndStaysFiniteInTheTail) {
  for (double z = -5; z <= 5; z += 0.25) {
    const double sigma = 0.7, best = 1.0, mean = best - z * sigma;
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0)), pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
    const double ei = sigma * (z * cdf + pdf);
    double d_mean, d_variance;
    const double log_ei = LogExpectedImprovement(mean, sigma * sigma, best, &d_mean, &d_variance);
    EXPECT_NEAR(log_ei, std::log(ei), 1e-9 * std::max(1.0, std::abs(std::log(ei)))) << z;
    const double h = 1e-6;
    EXPECT_NEAR(d_mean,
                (LogExpectedImprovement(mean + h, sigma * sigma, best) -
                 LogExpectedImprovement(mean - h, sigma * sigma, best)) /
                    (2 * h),
                1e-5 * std::max(1.0, std::abs(d_mean)));
    EXPECT_NEAR(d_variance,
                (LogExpectedImprovement(mean, sigma * sigma + h, best) -
                 LogExpectedImprovement(mean, sigma * sigma - h, best)) /
                    (2 * h),
                1e-5 * std::max(1.0, std::abs(d_variance)));
  }
  // Far in the tail the plain formula gives log(0); ours falls smoothly, like -z^2/2.
  double previous = 0;
  for (double z = -8; z >= -60; z -= 4) {
    const double v = LogExpectedImprovement(-z, 1.0, 0.0);
    ASSERT_TRUE(std::isfinite(v)) << z;
    EXPECT_LT(v, previous);
    EXPECT_NEAR(v, -0.5 * z * z - 0.5 * std::log(2 * M_PI) - 2 * std::log(-z), 0.06) << z;
    previous = v;
  }
  // Either side of the switches between formulas (z = -1, -20 and -25) agrees.
  EXPECT_NEAR(LogExpectedImprovement(1 - 1e-9, 1.0, 0.0), LogExpectedImprovement(1 + 1e-9, 1.0, 0.0), 1e-7);
  EXPECT_NEAR(LogExpectedImprovement(20 - 1e-9, 1.0, 0.0), LogExpectedImprovement(20 + 1e-9, 1.0, 0.0), 1e-7);
  EXPECT_NEAR(LogExpectedImprovement(25 - 1e-9, 1.0, 0.0), LogExpectedImprovement(25 + 1e-9, 1.0, 0.0), 1e-7);
}

TEST(LogProbabilityBelowZero, EqualsTheNormalCdfAndStaysFinite) {
  for (double mean = -4; mean <= 4; mean += 0.5) {
    const double expected = std::log(0.5 * std::erfc(mean / (2.0 * std::sqrt(2.0))));
    EXPECT_NEAR(LogProbabilityBelowZero(mean, 4.0), expected, 1e-10) << mean;
  }
  EXPECT_TRUE(std::isfinite(LogProbabilityBelowZero(200, 1.0)));
  EXPECT_LT(LogProbabilityBelowZero(200, 1.0), -19000);
}

TEST(BoxLbfgs, MinimisesInsideTheBoxAndStopsAtABound) {
  const Objective rosenbrock = [](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    const double a = 1 - x[0], b = x[1] - x[0] * x[0];
    (*g)[0] = -2 * a - 400 * x[0] * b;
    (*g)[1] = 200 * b;
    return a * a + 100 * b * b;
  };
  BoxLbfgsOptions options;
  options.max_iterations = 500;
  options.relative_f_tol = 0;
  options.projected_gradient_tol = 1e-8;
  const BoxLbfgsResult inside =
      MinimizeInBox(rosenbrock, Eigen::Vector2d(-1.2, 1), Eigen::Vector2d(-2, -2), Eigen::Vector2d(2, 2), options);
  EXPECT_NEAR(inside.x[0], 1, 1e-4);
  EXPECT_NEAR(inside.x[1], 1, 1e-4);
  // With x0 <= 0.5 the constrained minimum lies on that bound: (0.5, 0.25).
  const BoxLbfgsResult bounded =
      MinimizeInBox(rosenbrock, Eigen::Vector2d(-1.2, 1), Eigen::Vector2d(-2, -2), Eigen::Vector2d(0.5, 2), options);
  EXPECT_DOUBLE_EQ(bounded.x[0], 0.5);
  EXPECT_NEAR(bounded.x[1], 0.25, 1e-4);
}

}  // namespace
}  // namespace cleansweep
