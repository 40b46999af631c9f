// Benchmark objectives shared by the sampler benchmark and its tests. Python twins live in
// bench/optuna_bench.py; both must compute the same numbers.
#pragma once

#include <cmath>
#include <string>

#include "trial/param_value.hpp"

namespace cleansweep::bench {

// Branin on x1 in [-5, 10], x2 in [0, 15]; minimum 0.397887.
inline double Branin(const ParamSet& p) {
  const double x1 = AsNumber(p.at("x1")), x2 = AsNumber(p.at("x2"));
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) + 10 * (1 - t) * std::cos(x1) + 10;
}

// Rosenbrock in 4 dimensions on [-2, 2]^4; minimum 0 at (1, 1, 1, 1).
inline double Rosenbrock4(const ParamSet& p) {
  double f = 0;
  for (int i = 0; i < 3; ++i) {
    const double a = AsNumber(p.at("x" + std::to_string(i))), b = AsNumber(p.at("x" + std::to_string(i + 1)));
    f += 100 * std::pow(b - a * a, 2) + std::pow(1 - a, 2);
  }
  return f;
}

// A mixed space: float, log-float, int, log-int and categorical; minimum 0.
inline double Mixed(const ParamSet& p) {
  const double x = AsNumber(p.at("x")), lr = AsNumber(p.at("lr")), n = AsNumber(p.at("n")), b = AsNumber(p.at("b"));
  const std::string& c = std::get<std::string>(p.at("c"));
  const double cat = c == "b" ? 0.0 : c == "c" ? 0.5 : c == "a" ? 1.0 : 2.0;
  return std::pow(x - 1.2, 2) + std::pow(std::log10(lr) + 2, 2) + std::pow(n - 7, 2) / 10 +
         std::pow(std::log2(b) - 6, 2) / 4 + cat;
}

// Hartmann-6 on x0..x5 in [0, 1]; minimum -3.32237 (bench/gp_bench.py computes the same).
inline double Hartmann6(const ParamSet& p) {
  static const double a[4][6] = {
      {10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8}, {17, 8, 0.05, 10, 0.1, 14}};
  static const double q[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  double f = 0;
  for (int r = 0; r < 4; ++r) {
    double s = 0;
    for (int k = 0; k < 6; ++k) {
      const double d = AsNumber(p.at("x" + std::to_string(k))) - q[r][k] * 1e-4;
      s += a[r][k] * d * d;
    }
    f -= alpha[r] * std::exp(-s);
  }
  return f;
}

inline const char* kBraninSpace =
    "  x1: {type: float, low: -5.0, high: 10.0}\n  x2: {type: float, low: 0.0, high: 15.0}\n";
inline const char* kRosenbrockSpace =
    "  x0: {type: float, low: -2.0, high: 2.0}\n  x1: {type: float, low: -2.0, high: 2.0}\n"
    "  x2: {type: float, low: -2.0, high: 2.0}\n  x3: {type: float, low: -2.0, high: 2.0}\n";
inline const char* kMixedSpace =
    "  x: {type: float, low: -5.0, high: 5.0}\n  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n"
    "  n: {type: int, low: 1, high: 20}\n  b: {type: int, low: 1, high: 1024, log: true}\n"
    "  c: {type: categorical, choices: [a, b, c, d]}\n";

}  // namespace cleansweep::bench
