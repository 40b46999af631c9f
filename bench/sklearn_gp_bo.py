"""A reference GP-BO loop written with scikit-learn, the way scikit-optimize's gp_minimize works, for
bench/gp_bench.py: the baseline our `gp` sampler must match or beat (issue 37, point 6).

- inputs on the unit cube: floats (log ones in log space) and ints scaled to [0, 1], ints rounded
  when decoded; a categorical one-hot (one input per choice, the largest wins when decoded);
- the first `n_initial` points from a scrambled Sobol sequence, then one point per trial;
- a GaussianProcessRegressor with ConstantKernel * Matern(nu=2.5, one length scale per input)
  + WhiteKernel, normalize_y, the marginal likelihood maximised from 3 starts (sklearn's L-BFGS-B);
- expected improvement (xi = 0.01), maximised over 2,000 random points and then by L-BFGS-B from
  the 5 best of them (gp_minimize's acq_optimizer="lbfgs" does the same with 10,000 points).

A space is a list of dicts: {"name", "type": float|int|categorical, "low", "high", "log", "choices"}.
"""
import math
import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.stats import norm, qmc
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel


class Encoding:
    """Maps parameter dicts to points of the unit cube and back."""

    def __init__(self, space):
        self.space = space
        self.width = sum(len(p["choices"]) if p["type"] == "categorical" else 1 for p in space)

    def _bounds(self, p):
        if p.get("log"):
            return math.log(p["low"]), math.log(p["high"])
        return p["low"], p["high"]

    def decode(self, u):
        params, i = {}, 0
        for p in self.space:
            if p["type"] == "categorical":
                k = len(p["choices"])
                params[p["name"]] = p["choices"][int(np.argmax(u[i:i + k]))]
                i += k
                continue
            lo, hi = self._bounds(p)
            x = lo + float(np.clip(u[i], 0, 1)) * (hi - lo)
            x = math.exp(x) if p.get("log") else x
            if p["type"] == "int":
                x = int(min(max(round(x), p["low"]), p["high"]))
            else:
                x = min(max(x, p["low"]), p["high"])
            params[p["name"]] = x
            i += 1
        return params

    def encode(self, params):
        u = []
        for p in self.space:
            v = params[p["name"]]
            if p["type"] == "categorical":
                u += [1.0 if c == v else 0.0 for c in p["choices"]]
                continue
            lo, hi = self._bounds(p)
            x = math.log(v) if p.get("log") else v
            u.append((x - lo) / (hi - lo) if hi > lo else 0.5)
        return np.array(u)


def expected_improvement(gp, X, best, xi=0.01):
    mu, sigma = gp.predict(np.atleast_2d(X), return_std=True)
    sigma = np.maximum(sigma, 1e-12)
    z = (best - mu - xi) / sigma
    return (best - mu - xi) * norm.cdf(z) + sigma * norm.pdf(z)


def minimize_gp(objective, space, n_trials, seed, n_initial=10):
    """Runs `n_trials` trials of `objective(params) -> float` (lower is better; None: the trial failed)
    and returns the values in order."""
    enc = Encoding(space)
    rng = np.random.default_rng(seed)
    sobol = qmc.Sobol(d=enc.width, scramble=True, seed=seed)
    initial = sobol.random_base2(max(1, math.ceil(math.log2(n_initial))))[:n_initial]  # a power of 2: balanced
    X, y, values = [], [], []
    for t in range(n_trials):
        if t < n_initial or len(y) < 2:
            u = initial[t % n_initial]
        else:
            kernel = ConstantKernel(1.0, (1e-3, 1e3)) * Matern(
                length_scale=np.ones(enc.width), length_scale_bounds=(1e-2, 1e2), nu=2.5) + WhiteKernel(
                1e-3, (1e-9, 1e-1))
            gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=2,
                                          random_state=int(rng.integers(1 << 31)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                gp.fit(np.array(X), np.array(y))
            best = min(y)
            candidates = rng.random((2000, enc.width))
            ei = expected_improvement(gp, candidates, best)
            u, u_ei = candidates[int(np.argmax(ei))], float(np.max(ei))
            for start in candidates[np.argsort(-ei)[:5]]:
                res = minimize(lambda v: -expected_improvement(gp, v, best)[0], start, method="L-BFGS-B",
                               bounds=[(0.0, 1.0)] * enc.width, options={"maxiter": 50})
                if -res.fun > u_ei:
                    u, u_ei = res.x, -res.fun
        params = enc.decode(u)
        value = objective(params)
        values.append(value)
        if value is None:  # failed: as gp_minimize, nothing to learn from; go on
            continue
        X.append(enc.encode(params))  # the decoded point: ints and categoricals as they ran
        y.append(value)
    return values
