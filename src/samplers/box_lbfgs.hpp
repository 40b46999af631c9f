// Minimisation of a smooth function inside a box: L-BFGS on the variables that are free, projected
// back into the bounds (the projected-gradient variant of L-BFGS-B). Used by the GP sampler for
// its kernel parameters and for the acquisition's local steps. Pure, deterministic.
#pragma once

#include <functional>

#include <Eigen/Core>

namespace cleansweep {

struct BoxLbfgsOptions {
  int max_iterations = 50;
  int memory = 8;                   // correction pairs kept
  double projected_gradient_tol = 1e-5;  // stop when every free gradient entry is below this
  double relative_f_tol = 1e-9;     // ... or when f changes by less than this, relatively
};

struct BoxLbfgsResult {
  Eigen::VectorXd x;
  double f = 0;
  int iterations = 0;
  int evaluations = 0;
};

// f(x, &gradient) returns the value at x and writes the gradient. x0 is projected into
// [lower, upper] first; a non-finite value counts as worse than any finite one.
using Objective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* gradient)>;
BoxLbfgsResult MinimizeInBox(const Objective& f, Eigen::VectorXd x0, const Eigen::VectorXd& lower,
                             const Eigen::VectorXd& upper, const BoxLbfgsOptions& options = {});

}  // namespace cleansweep
