#include "samplers/tpe_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "samplers/random_sampler.hpp"

namespace cleansweep {
namespace {

// A finished trial's failure tells the sampler "not here"; an interrupted one says nothing.
bool IsInfeasible(TrialState s) {
  return s == TrialState::kFail || s == TrialState::kCrash || s == TrialState::kOomGpu ||
         s == TrialState::kOomHost || s == TrialState::kTimeout;
}

bool HasValue(const TrialRecord& r) {
  return (r.state == TrialState::kComplete || r.state == TrialState::kPruned) && r.value.has_value();
}

struct Observed {
  std::int64_t number;
  const ParamSet* params;
};

}  // namespace

struct TpeSampler::Split {
  std::vector<Observed> below;       // oldest first
  std::vector<Observed> above;       // oldest first, at most kMaxAboveKernels
  std::vector<Observed> feasible;    // every scored trial (the recent ones, as above)
  std::vector<Observed> infeasible;  // trials that failed: OOM, crash, timeout, non-zero exit
};

std::vector<double> TpeWeights(size_t n) {
  constexpr size_t kFlat = 25;
  std::vector<double> w(n, 1.0);
  if (n <= kFlat) return w;
  const size_t ramp = n - kFlat;
  for (size_t i = 0; i < ramp; ++i) {
    w[i] = 1.0 / static_cast<double>(n) +
           (1.0 - 1.0 / static_cast<double>(n)) * static_cast<double>(i) / static_cast<double>(std::max<size_t>(ramp - 1, 1));
  }
  return w;
}

TpeSampler::TpeSampler(SearchSpace space, SamplerOptions options, Direction direction)
    : space_(std::move(space)), options_(std::move(options)), direction_(direction) {}

TpeSampler::Split TpeSampler::SplitTrials(std::int64_t number, const TrialHistory& history) const {
  std::vector<const TrialRecord*> scored;
  Split split;
  for (const TrialRecord& r : history.finished) {
    if (HasValue(r)) {
      scored.push_back(&r);
    } else if (IsInfeasible(r.state)) {
      split.above.push_back({r.number, &r.params});
      split.infeasible.push_back({r.number, &r.params});
    }
  }
  const double sign = direction_ == Direction::kMaximize ? -1.0 : 1.0;
  std::stable_sort(scored.begin(), scored.end(), [&](const TrialRecord* a, const TrialRecord* b) {
    return sign * *a->value < sign * *b->value;
  });
  const auto n_below = std::min<size_t>(
      static_cast<size_t>(std::ceil(options_.gamma * static_cast<double>(scored.size()))),
      static_cast<size_t>(options_.gamma_max));
  for (size_t i = 0; i < scored.size(); ++i) {
    (i < n_below ? split.below : split.above).push_back({scored[i]->number, &scored[i]->params});
    split.feasible.push_back({scored[i]->number, &scored[i]->params});
  }
  if (options_.constant_liar) {
    for (const auto& [n, params] : history.running) {
      if (n != number) split.above.push_back({n, &params});
    }
  }
  const auto by_age = [](const Observed& a, const Observed& b) { return a.number < b.number; };
  for (std::vector<Observed>* set : {&split.below, &split.above, &split.feasible, &split.infeasible}) {
    std::sort(set->begin(), set->end(), by_age);
    if (set->size() > kMaxAboveKernels) {
      set->erase(set->begin(), set->end() - static_cast<std::ptrdiff_t>(kMaxAboveKernels));
    }
  }
  return split;
}

void TpeSampler::SampleGroup(const std::vector<const ParamSpec*>& group, const Split& split, SplitMix64& rng,
                             ParamSet* out) const {
  std::vector<EstimatorDim> dims;
  for (const ParamSpec* spec : group) {
    EstimatorDim dim;
    dim.categorical = spec->kind == ParamKind::kCategorical;
    dim.n_choices = static_cast<int>(spec->choices.size());
    if (!dim.categorical) dim.domain = NumericDomain::For(*spec);
    dims.push_back(dim);
  }
  // Rows of the trials that have every parameter of the group, encoded.
  const auto rows_of = [&](const std::vector<Observed>& trials) {
    std::vector<std::vector<double>> rows;
    for (const Observed& t : trials) {
      std::vector<double> row;
      for (size_t d = 0; d < group.size(); ++d) {
        const auto it = t.params->find(group[d]->name);
        if (it == t.params->end()) break;
        if (dims[d].categorical) {
          const std::optional<int> index = ChoiceIndex(*group[d], it->second);
          if (!index) break;
          row.push_back(*index);
        } else {
          const double x = dims[d].domain.Encode(it->second);
          if (!(x >= dims[d].domain.low && x <= dims[d].domain.high)) break;  // from an older space
          row.push_back(x);
        }
      }
      if (row.size() == group.size()) rows.push_back(std::move(row));
    }
    return rows;
  };
  const std::vector<std::vector<double>> below = rows_of(split.below), above = rows_of(split.above);
  const ParzenEstimator l(dims, below, TpeWeights(below.size()), options_.prior_weight);
  const ParzenEstimator g(dims, above, TpeWeights(above.size()), options_.prior_weight);
  // Where trials failed, a second pair of densities estimates P(feasible | x) as in c-TPE
  // (Watanabe & Hutter 2023), and each candidate's score is weighted by it.
  const std::vector<std::vector<double>> ok = rows_of(split.feasible), failed = rows_of(split.infeasible);
  std::optional<ParzenEstimator> f, o;
  if (!failed.empty()) {
    f.emplace(dims, ok, TpeWeights(ok.size()), options_.prior_weight);
    o.emplace(dims, failed, TpeWeights(failed.size()), options_.prior_weight);
  }
  const double log_n_ok = std::log(static_cast<double>(ok.size()) + 1), log_n_failed = std::log(static_cast<double>(failed.size()) + 1);
  std::vector<double> best;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < options_.n_ei_candidates; ++i) {
    std::vector<double> x = l.Sample(rng);
    double score = l.LogPdf(x) - g.LogPdf(x);
    if (f) {
      const double a = log_n_ok + f->LogPdf(x), b = log_n_failed + o->LogPdf(x);
      score += a - (std::max(a, b) + std::log1p(std::exp(-std::abs(a - b))));  // log P(feasible | x)
    }
    if (best.empty() || score > best_score) {
      best_score = score;
      best = std::move(x);
    }
  }
  for (size_t d = 0; d < group.size(); ++d) {
    const ParamSpec& spec = *group[d];
    (*out)[spec.name] = dims[d].categorical ? spec.choices[static_cast<size_t>(best[d])]
                                            : dims[d].domain.Decode(spec, best[d]);
  }
}

std::optional<ParamSet> TpeSampler::Ask(std::int64_t number, const TrialHistory& history) {
  SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(number));
  const auto scored = std::count_if(history.finished.begin(), history.finished.end(), HasValue);
  if (scored < options_.n_startup_trials) return RandomSampler::Draw(space_, rng);
  const Split split = SplitTrials(number, history);
  ParamSet out;
  std::vector<const ParamSpec*> joint;
  if (options_.multivariate) {
    // Numeric parameters that are always active share one joint density; categorical ones do
    // better on their own (bench/README.md has the measurements).
    for (const ParamSpec& spec : space_.params()) {
      const bool numeric = spec.kind == ParamKind::kFloat || spec.kind == ParamKind::kInt;
      if (numeric && !SearchSpace::IsConditional(spec)) joint.push_back(&spec);
    }
    if (joint.size() > 1) SampleGroup(joint, split, rng, &out);
    else joint.clear();
  }
  for (const ParamSpec& spec : space_.params()) {
    if (out.count(spec.name) || !SearchSpace::IsActive(spec, out)) continue;
    if (spec.kind == ParamKind::kFixed) {
      out[spec.name] = spec.fixed_value;
    } else {
      SampleGroup({&spec}, split, rng, &out);  // conditional ones see only trials where they were active
    }
  }
  return out;
}

}  // namespace cleansweep
