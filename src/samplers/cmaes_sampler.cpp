#include "samplers/cmaes_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "samplers/random_sampler.hpp"

namespace cleansweep {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations: a = v diag(w) v^T.
void SymmetricEigen(Matrix a, Matrix* v, std::vector<double>* w) {
  const size_t n = a.size();
  *v = Matrix(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) (*v)[i][i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (size_t p = 0; p < n; ++p) {
      for (size_t q = p + 1; q < n; ++q) off += a[p][q] * a[p][q];
    }
    if (off < 1e-30) break;
    for (size_t p = 0; p < n; ++p) {
      for (size_t q = p + 1; q < n; ++q) {
        if (std::abs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // a <- J^T a J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; ++k) {
          const double vkp = (*v)[k][p], vkq = (*v)[k][q];
          (*v)[k][p] = c * vkp - s * vkq;
          (*v)[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  w->resize(n);
  for (size_t i = 0; i < n; ++i) (*w)[i] = a[i][i];
}

}  // namespace

CmaesSampler::CmaesSampler(SearchSpace space, SamplerOptions options, Direction direction)
    : space_(std::move(space)), options_(std::move(options)), direction_(direction), rng_(options_.seed) {
  for (const ParamSpec& spec : space_.params()) {
    if ((spec.kind == ParamKind::kFloat || spec.kind == ParamKind::kInt) && !SearchSpace::IsConditional(spec)) {
      numeric_.push_back(&spec);
      domains_.push_back(NumericDomain::For(spec));
    }
  }
  n_ = numeric_.size();
  if (n_ == 0) return;
  const double n = static_cast<double>(n_);
  lambda_ = options_.popsize > 0 ? options_.popsize : 4 + static_cast<int>(std::floor(3 * std::log(n)));
  mu_ = lambda_ / 2;
  for (int i = 0; i < mu_; ++i) weights_.push_back(std::log(mu_ + 0.5) - std::log(i + 1.0));
  double sum = 0, sum_sq = 0;
  for (double w : weights_) sum += w;
  for (double& w : weights_) w /= sum;
  for (double w : weights_) sum_sq += w * w;
  mu_eff_ = 1 / sum_sq;
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_1_ = 2 / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, 2 * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + mu_eff_));
  chi_n_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  mean_.assign(n_, 0.5);
  p_sigma_.assign(n_, 0.0);
  p_c_.assign(n_, 0.0);
  sigma_ = options_.sigma0;
  c_ = Matrix(n_, std::vector<double>(n_, 0.0));
  for (size_t i = 0; i < n_; ++i) c_[i][i] = 1;
  Decompose();
}

void CmaesSampler::Decompose() {
  std::vector<double> eigenvalues;
  SymmetricEigen(c_, &b_, &eigenvalues);
  d_.resize(n_);
  for (size_t i = 0; i < n_; ++i) d_[i] = std::sqrt(std::max(eigenvalues[i], 1e-20));
}

std::vector<double> CmaesSampler::Draw() {
  std::vector<double> x(n_);
  for (int tries = 0; tries < 100; ++tries) {  // resample until inside the box
    std::vector<double> z(n_);
    for (double& zi : z) zi = rng_.Normal();
    bool inside = true;
    for (size_t i = 0; i < n_; ++i) {
      double y = 0;
      for (size_t j = 0; j < n_; ++j) y += b_[i][j] * d_[j] * z[j];
      x[i] = mean_[i] + sigma_ * y;
      inside = inside && x[i] >= 0 && x[i] <= 1;
    }
    if (inside) return x;
  }
  for (double& xi : x) xi = std::clamp(xi, 0.0, 1.0);
  return x;
}

void CmaesSampler::Absorb(const TrialHistory& history) {
  const double sign = direction_ == Direction::kMaximize ? -1.0 : 1.0;
  for (; history_seen_ < history.finished.size(); ++history_seen_) {
    const TrialRecord& r = history.finished[history_seen_];
    const auto it = asked_.find(r.number);
    if (it == asked_.end()) {
      // Another shard's trial, or an earlier study's (warm start): an external solution.
      if (r.number < 0 && r.state != TrialState::kInterrupted) Inject(r, sign);
      continue;
    }
    const Candidate candidate = std::move(it->second);
    asked_.erase(it);
    if (candidate.generation != generation_ || r.state == TrialState::kInterrupted) continue;
    // A failure ranks after every scored trial of its generation.
    const double loss = HasScore(r) ? sign * *r.value : std::numeric_limits<double>::infinity();
    scored_.emplace_back(loss, candidate.x);
    if (static_cast<int>(scored_.size()) >= lambda_) Update();
  }
}

// Hansen's injection of external solutions (2011): the point joins the current generation as if
// drawn, its step from the mean clipped to a Mahalanobis length of sqrt(n) + 2n / (n + 2), so
// that a far-away point moves neither the mean nor the step size more than a draw could.
void CmaesSampler::Inject(const TrialRecord& r, double sign) {
  std::vector<double> y(n_);
  for (size_t d = 0; d < n_; ++d) {
    const auto value = r.params.find(numeric_[d]->name);
    if (value == r.params.end()) return;  // not of this space's numeric parameters
    const double x = (domains_[d].Encode(value->second) - domains_[d].low) / domains_[d].width();
    y[d] = (std::clamp(x, 0.0, 1.0) - mean_[d]) / sigma_;
  }
  std::vector<double> bt(n_, 0.0);  // D^-1 B^T y: the whitened step, whose length is C's norm
  double length = 0;
  for (size_t j = 0; j < n_; ++j) {
    for (size_t i = 0; i < n_; ++i) bt[j] += b_[i][j] * y[i];
    bt[j] /= d_[j];
    length += bt[j] * bt[j];
  }
  length = std::sqrt(length);
  const double n = static_cast<double>(n_), most = std::sqrt(n) + 2 * n / (n + 2);
  const double scale = length > most ? most / length : 1.0;
  std::vector<double> x(n_);
  for (size_t d = 0; d < n_; ++d) x[d] = mean_[d] + sigma_ * scale * y[d];
  const double loss = HasScore(r) ? sign * *r.value : std::numeric_limits<double>::infinity();
  scored_.emplace_back(loss, std::move(x));
  ++injected_;
  if (static_cast<int>(scored_.size()) >= lambda_) Update();
}

void CmaesSampler::Update() {
  std::stable_sort(scored_.begin(), scored_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::vector<double> old_mean = mean_;
  std::fill(mean_.begin(), mean_.end(), 0.0);
  for (int i = 0; i < mu_; ++i) {
    for (size_t d = 0; d < n_; ++d)
      mean_[d] += weights_[static_cast<size_t>(i)] * scored_[static_cast<size_t>(i)].second[d];
  }
  // step = (mean - old_mean) / sigma; C^{-1/2} step = B D^{-1} B^T step.
  std::vector<double> step(n_), bt(n_, 0.0), inv_sqrt(n_, 0.0);
  for (size_t d = 0; d < n_; ++d) step[d] = (mean_[d] - old_mean[d]) / sigma_;
  for (size_t j = 0; j < n_; ++j) {
    for (size_t i = 0; i < n_; ++i) bt[j] += b_[i][j] * step[i];
    bt[j] /= d_[j];
  }
  for (size_t i = 0; i < n_; ++i) {
    for (size_t j = 0; j < n_; ++j) inv_sqrt[i] += b_[i][j] * bt[j];
  }
  const double n = static_cast<double>(n_);
  double ps_norm = 0;
  for (size_t d = 0; d < n_; ++d) {
    p_sigma_[d] = (1 - c_sigma_) * p_sigma_[d] + std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_) * inv_sqrt[d];
    ps_norm += p_sigma_[d] * p_sigma_[d];
  }
  ps_norm = std::sqrt(ps_norm);
  const double gen = static_cast<double>(generation_ + 1);
  const bool h_sigma = ps_norm / std::sqrt(1 - std::pow(1 - c_sigma_, 2 * gen)) < (1.4 + 2 / (n + 1)) * chi_n_;
  for (size_t d = 0; d < n_; ++d) {
    p_c_[d] = (1 - c_c_) * p_c_[d] + (h_sigma ? std::sqrt(c_c_ * (2 - c_c_) * mu_eff_) : 0.0) * step[d];
  }
  const double delta = (1 - (h_sigma ? 1.0 : 0.0)) * c_c_ * (2 - c_c_);
  for (size_t i = 0; i < n_; ++i) {
    for (size_t j = 0; j < n_; ++j) {
      double rank_mu = 0;
      for (int k = 0; k < mu_; ++k) {
        const auto& x = scored_[static_cast<size_t>(k)].second;
        rank_mu += weights_[static_cast<size_t>(k)] * (x[i] - old_mean[i]) * (x[j] - old_mean[j]) / (sigma_ * sigma_);
      }
      c_[i][j] = (1 - c_1_ - c_mu_) * c_[i][j] + c_1_ * (p_c_[i] * p_c_[j] + delta * c_[i][j]) + c_mu_ * rank_mu;
    }
  }
  sigma_ *= std::exp((c_sigma_ / d_sigma_) * (ps_norm / chi_n_ - 1));
  sigma_ = std::clamp(sigma_, 1e-12, 1.0);
  Decompose();
  scored_.clear();
  ++generation_;
}

std::optional<ParamSet> CmaesSampler::Ask(std::int64_t number, const TrialHistory& history) {
  SplitMix64 fill = StreamFor(options_.seed ^ 0x5bd1e995u, static_cast<std::uint64_t>(number));
  ParamSet params = RandomSampler::Draw(space_, fill);  // categorical and conditional parameters
  const auto scored = std::count_if(history.finished.begin(), history.finished.end(), HasScore);
  if (n_ == 0 || scored < options_.n_startup_trials) return params;
  Absorb(history);
  std::vector<double> x = Draw();
  for (size_t d = 0; d < n_; ++d) {
    params[numeric_[d]->name] = domains_[d].Decode(*numeric_[d], domains_[d].low + x[d] * domains_[d].width());
  }
  // Record where the (decoded) value sits, so the update learns from what actually ran.
  for (size_t d = 0; d < n_; ++d) {
    x[d] = (domains_[d].Encode(params[numeric_[d]->name]) - domains_[d].low) / domains_[d].width();
  }
  asked_[number] = {generation_, std::move(x)};
  return SearchSpace::Complete(space_, params, {}, {});
}

}  // namespace cleansweep
