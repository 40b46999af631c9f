#include "samplers/box_lbfgs.hpp"

#include <cmath>
#include <deque>
#include <limits>

namespace cleansweep {
namespace {

Eigen::VectorXd Project(Eigen::VectorXd x, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {
  return x.cwiseMax(lower).cwiseMin(upper);
}

// Variables held at a bound by a gradient that pushes outwards: the step leaves them alone.
Eigen::VectorXd FreeMask(const Eigen::VectorXd& x, const Eigen::VectorXd& g, const Eigen::VectorXd& lower,
                         const Eigen::VectorXd& upper) {
  Eigen::VectorXd free = Eigen::VectorXd::Ones(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if ((x[i] <= lower[i] && g[i] > 0) || (x[i] >= upper[i] && g[i] < 0)) free[i] = 0;
  }
  return free;
}

struct Pair {
  Eigen::VectorXd s, y;
  double rho;
};

// The two-loop recursion: an approximation of -H g from the stored pairs.
Eigen::VectorXd Direction(const std::deque<Pair>& pairs, const Eigen::VectorXd& g) {
  Eigen::VectorXd q = g;
  std::vector<double> alpha(pairs.size());
  for (size_t k = pairs.size(); k-- > 0;) {
    alpha[k] = pairs[k].rho * pairs[k].s.dot(q);
    q -= alpha[k] * pairs[k].y;
  }
  if (!pairs.empty()) q *= pairs.back().s.dot(pairs.back().y) / pairs.back().y.squaredNorm();
  for (size_t k = 0; k < pairs.size(); ++k) {
    const double beta = pairs[k].rho * pairs[k].y.dot(q);
    q += (alpha[k] - beta) * pairs[k].s;
  }
  return -q;
}

}  // namespace

BoxLbfgsResult MinimizeInBox(const Objective& f, Eigen::VectorXd x0, const Eigen::VectorXd& lower,
                             const Eigen::VectorXd& upper, const BoxLbfgsOptions& options) {
  BoxLbfgsResult result;
  const auto evaluate = [&](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    ++result.evaluations;
    const double v = f(x, g);
    if (!std::isfinite(v) || !g->allFinite()) return std::numeric_limits<double>::infinity();
    return v;
  };
  Eigen::VectorXd x = Project(std::move(x0), lower, upper), g(x.size());
  double fx = evaluate(x, &g);
  if (!std::isfinite(fx)) {
    result.x = x;
    result.f = fx;
    return result;
  }
  std::deque<Pair> pairs;
  for (; result.iterations < options.max_iterations; ++result.iterations) {
    const Eigen::VectorXd free = FreeMask(x, g, lower, upper);
    const Eigen::VectorXd free_g = g.cwiseProduct(free);
    if (free_g.lpNorm<Eigen::Infinity>() < options.projected_gradient_tol) break;
    Eigen::VectorXd d = Direction(pairs, free_g).cwiseProduct(free);
    if (!(d.dot(free_g) < 0)) {  // not a descent direction: forget the curvature, go downhill
      pairs.clear();
      d = -free_g;
    }
    if (pairs.empty()) d /= std::max(1.0, d.lpNorm<Eigen::Infinity>() / (upper - lower).maxCoeff());
    // Backtracking along the projected path until the Armijo condition holds.
    double t = 1;
    Eigen::VectorXd x_new, g_new(x.size());
    double f_new = std::numeric_limits<double>::infinity();
    bool moved = false;
    for (int k = 0; k < 30; ++k, t *= 0.5) {
      x_new = Project(x + t * d, lower, upper);
      const Eigen::VectorXd step = x_new - x;
      if (step.lpNorm<Eigen::Infinity>() == 0) break;
      f_new = evaluate(x_new, &g_new);
      if (f_new <= fx + 1e-4 * g.dot(step)) {
        moved = true;
        break;
      }
    }
    if (!moved) break;
    Pair p{x_new - x, g_new - g, 0};
    const double sy = p.s.dot(p.y);
    if (sy > 1e-12 * p.y.squaredNorm()) {
      p.rho = 1 / sy;
      pairs.push_back(std::move(p));
      if (static_cast<int>(pairs.size()) > options.memory) pairs.pop_front();
    }
    const double change = fx - f_new;
    x = std::move(x_new);
    g = g_new;
    fx = f_new;
    if (change <= options.relative_f_tol * std::max(1.0, std::abs(fx))) {
      ++result.iterations;
      break;
    }
  }
  result.x = std::move(x);
  result.f = fx;
  return result;
}

}  // namespace cleansweep
