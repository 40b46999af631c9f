#include "samplers/tpe_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "samplers/random_sampler.hpp"

namespace cleansweep {
namespace {

// The trials TPE learns from, oldest first: the finished ones in completion order, then those
// paused at a rung (pruner.resume), which count as pruned trials do until they go on.
std::vector<const TrialRecord*> Ended(const TrialHistory& history) {
  std::vector<const TrialRecord*> ended;
  ended.reserve(history.finished.size() + history.paused.size());
  for (const TrialRecord& r : history.finished) ended.push_back(&r);
  for (const auto& [number, r] : history.paused) ended.push_back(&r);
  return ended;
}

std::int64_t Scored(const TrialHistory& history) {
  const auto scored = [](std::int64_t n, const TrialRecord& r) { return n + (HasScore(r) ? 1 : 0); };
  std::int64_t n = std::accumulate(history.finished.begin(), history.finished.end(), std::int64_t{0}, scored);
  for (const auto& [number, r] : history.paused) n = scored(n, r);
  return n;
}

struct Observed {
  std::int64_t number;
  const ParamSet* params;
  double weight = 1;
};

// Optuna's weights for `set` (oldest first), then the set thinned to at most `max_size`: the newest
// half stays, older trials are kept every k-th with their neighbours' weight (TpeSampler::kMaxKernels).
void WeighAndThin(std::vector<Observed>* set, size_t max_size) {
  const std::vector<double> weights = TpeWeights(set->size());
  for (size_t i = 0; i < set->size(); ++i) (*set)[i].weight = weights[i];
  if (set->size() <= max_size) return;
  const size_t keep_new = max_size / 2, old = set->size() - keep_new;
  const size_t stride = (old + (max_size - keep_new) - 1) / (max_size - keep_new);
  std::vector<Observed> kept;
  for (size_t i = 0; i < old; i += stride) {
    Observed o = (*set)[i];
    for (size_t j = i + 1; j < std::min(old, i + stride); ++j) o.weight += (*set)[j].weight;
    kept.push_back(o);
  }
  kept.insert(kept.end(), set->begin() + static_cast<std::ptrdiff_t>(old), set->end());
  *set = std::move(kept);
}

}  // namespace

// What SampleGroup() needs of one group of parameters, fitted once per split: within a batch
// only the "above" set grows (each proposal joins it as a running trial), so the good density,
// and the feasibility pair are fitted once, and each proposal is added to g (ParzenEstimator::Add).
struct TpeSampler::GroupFit {
  std::vector<EstimatorDim> dims;
  std::optional<ParzenEstimator> l;     // the good trials
  std::optional<ParzenEstimator> g;     // the others: each proposal of a batch is added to it
  std::optional<ParzenEstimator> f, o;  // feasible and failed trials, when some failed
  double log_n_ok = 0, log_n_failed = 0;
  size_t above_seen = 0;  // entries of Split::above in g so far
};

struct TpeSampler::Split {
  std::vector<Observed> below;       // oldest first
  std::vector<Observed> above;       // oldest first, at most kMaxKernels
  std::vector<Observed> feasible;    // every scored trial (the recent ones, as above)
  std::vector<Observed> infeasible;  // trials that failed: OOM, crash, timeout, non-zero exit
  mutable std::map<std::vector<const ParamSpec*>, GroupFit> fits;  // by group, filled as asked
};

std::vector<double> TpeWeights(size_t n) {
  constexpr size_t kFlat = 25;
  std::vector<double> w(n, 1.0);
  if (n <= kFlat) return w;
  const size_t ramp = n - kFlat;
  for (size_t i = 0; i < ramp; ++i) {
    w[i] = 1.0 / static_cast<double>(n) + (1.0 - 1.0 / static_cast<double>(n)) * static_cast<double>(i) /
                                              static_cast<double>(std::max<size_t>(ramp - 1, 1));
  }
  return w;
}

TpeSampler::TpeSampler(SearchSpace space, SamplerOptions options, std::vector<Metric> metrics)
    : space_(std::move(space)), options_(std::move(options)), metrics_(std::move(metrics)) {}

std::vector<double> TpeSampler::GoodByLoss(const std::vector<double>& losses, size_t n_below) {
  std::vector<double> good(losses.size(), 0);
  if (n_below == 0) return good;
  // The n_below-th best loss by selection (linear time); of the trials equal to it, the oldest.
  std::vector<double> sorted = losses;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n_below - 1), sorted.end());
  const double cut = sorted[n_below - 1];
  size_t ties_admitted =
      n_below - static_cast<size_t>(std::count_if(sorted.begin(), sorted.end(), [&](double v) { return v < cut; }));
  for (size_t i = 0; i < losses.size(); ++i) {
    const double loss = losses[i];
    if (loss < cut || (loss == cut && ties_admitted > 0)) {
      if (loss == cut) --ties_admitted;
      good[i] = 1;
    }
  }
  return good;
}

namespace {

// The reference point of a hypervolume among `points` (all of `a`, then those of `b` at `indices`):
// a tenth of their range past their worst value in every metric. Taken from the points being
// compared, as Optuna does, not from every trial: against a point past the random start-up
// trials, the extremes' boxes dwarf the rest and the search drifts to a corner of the front
// (DTLZ2 in bench/README.md).
Point LocalReference(const std::vector<Point>& a, const std::vector<Point>& b, const std::vector<size_t>& indices) {
  Point high = a.empty() ? b[indices.front()] : a.front(), low = high;
  const auto widen = [&](const Point& p) {
    for (size_t m = 0; m < p.size(); ++m) {
      high[m] = std::max(high[m], p[m]);
      low[m] = std::min(low[m], p[m]);
    }
  };
  for (const Point& p : a) widen(p);
  for (const size_t i : indices) widen(b[i]);
  for (size_t m = 0; m < high.size(); ++m) high[m] += 0.1 * std::max(high[m] - low[m], 1e-12);
  return high;
}

}  // namespace

std::vector<double> TpeSampler::GoodByFronts(const std::vector<Point>& points, size_t n_below) const {
  std::map<size_t, double> good;  // index -> weight
  if (n_below == 0 || points.empty()) return std::vector<double>(points.size(), 0);
  const std::vector<int> ranks = NondominatedRanks(points);
  std::vector<Point> chosen;
  for (int front = 0; good.size() < n_below; ++front) {
    std::vector<size_t> members;
    for (size_t i = 0; i < points.size(); ++i) {
      if (ranks[i] == front) members.push_back(i);
    }
    if (members.empty()) break;
    if (good.size() + members.size() <= n_below) {
      for (size_t i : members) {
        good[i] = 1;
        chosen.push_back(points[i]);
      }
      continue;
    }
    // Greedy hypervolume subset selection (against the reference point of the trials chosen so
    // far and this front's): the member that adds the most, one at a time. Lazily:
    // a point's gain only shrinks as others are chosen, so a stale gain is an upper bound, and a
    // point whose fresh gain still beats every other bound is the one to take.
    const Point reference = LocalReference(chosen, points, members);
    std::vector<std::pair<double, size_t>> bounds;  // a max-heap of (gain so far, index)
    for (size_t i : members) {
      double box = 1;
      for (size_t m = 0; m < reference.size(); ++m) box *= reference[m] - points[i][m];
      bounds.emplace_back(box, i);
    }
    std::make_heap(bounds.begin(), bounds.end());
    double base = Hypervolume(chosen, reference);
    while (good.size() < n_below && !bounds.empty()) {
      std::pop_heap(bounds.begin(), bounds.end());
      const size_t i = bounds.back().second;
      bounds.pop_back();
      std::vector<Point> with = chosen;
      with.push_back(points[i]);
      const double volume = Hypervolume(with, reference);
      const double gain = volume - base;
      if (!bounds.empty() && gain < bounds.front().first) {  // another may add more now: look again
        bounds.emplace_back(gain, i);
        std::push_heap(bounds.begin(), bounds.end());
        continue;
      }
      good[i] = 1;
      chosen = std::move(with);
      base = volume;
    }
    break;
  }
  // Weights: each good trial's exclusive hypervolume within the good set, relative to the
  // largest; a floor keeps every good trial in the density.
  std::vector<Point> all;
  std::vector<size_t> order;
  for (const auto& [i, w] : good) {
    all.push_back(points[i]);
    order.push_back(i);
  }
  if (all.empty()) return std::vector<double>(points.size(), 0);
  const Point reference = LocalReference(all, points, {});
  const double total = Hypervolume(all, reference);
  std::vector<double> contribution(all.size());
  double largest = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<Point> without = all;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(k));
    contribution[k] = total - Hypervolume(without, reference);
    largest = std::max(largest, contribution[k]);
  }
  std::vector<double> weights(points.size(), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    weights[order[k]] = largest > 0 ? std::max(contribution[k] / largest, 0.1) : 1.0;
  }
  return weights;
}

TpeSampler::Split TpeSampler::SplitTrials(std::int64_t number, const TrialHistory& history) const {
  // Which trials are ranked: with one metric every trial with a score; with several, COMPLETE
  // feasible trials with every value (a pruned one has only the first, and counts as not good).
  const bool several = metrics_.size() > 1;
  const auto ranked = [&](const TrialRecord& r) {
    return several ? r.state == TrialState::kComplete && r.values.size() == metrics_.size() && !r.infeasible()
                   : HasScore(r);
  };
  const auto n_below = [&](size_t ranked_count) {
    return std::min<size_t>(static_cast<size_t>(std::ceil(options_.gamma * static_cast<double>(ranked_count))),
                            static_cast<size_t>(options_.gamma_max));
  };
  const std::vector<const TrialRecord*> ended = Ended(history);
  std::vector<double> good;  // per ranked trial, in completion order: its weight if good, else 0
  if (several) {
    std::vector<Point> points;
    for (const TrialRecord* r : ended) {
      if (ranked(*r)) points.push_back(Minimized(metrics_, r->values));
    }
    good = GoodByFronts(points, n_below(points.size()));
  } else {
    const double sign = metrics_.front().direction == Direction::kMaximize ? -1.0 : 1.0;
    std::vector<double> losses;
    for (const TrialRecord* r : ended) {
      if (ranked(*r)) losses.push_back(sign * *r->value);
    }
    good = GoodByLoss(losses, n_below(losses.size()));
  }
  // One pass in completion order, so every set comes out oldest first without sorting.
  Split split;
  size_t index = 0;
  for (const TrialRecord* ended_trial : ended) {
    const TrialRecord& r = *ended_trial;
    const Observed o{r.number, &r.params};
    if (ranked(r)) {
      const double weight = good[index++];
      if (weight > 0) {
        split.below.push_back({r.number, &r.params, weight});
      } else {
        split.above.push_back(o);
      }
      split.feasible.push_back(o);
    } else if (HasScore(r)) {
      split.above.push_back(o);
      split.feasible.push_back(o);
    } else if (IsFailure(r.state) || r.infeasible()) {  // "not here"; an interrupted trial says nothing
      split.above.push_back(o);
      split.infeasible.push_back(o);
    }
  }
  if (options_.constant_liar) {  // running trials are the newest
    for (const auto& [n, params] : history.running) {
      if (n != number) split.above.push_back({n, &params});
    }
  }
  // One metric: good trials weigh by recency as the others do; several: by their hypervolume.
  if (!several) WeighAndThin(&split.below, kMaxKernels);
  for (std::vector<Observed>* set : {&split.above, &split.feasible, &split.infeasible}) {
    WeighAndThin(set, kMaxKernels);
  }
  return split;
}

void TpeSampler::SampleGroup(const std::vector<const ParamSpec*>& group, const Split& split, SplitMix64& rng,
                             ParamSet* out) const {
  GroupFit& fit = split.fits[group];
  const bool fresh = fit.dims.empty();
  if (fresh) {
    for (const ParamSpec* spec : group) {
      EstimatorDim dim;
      dim.categorical = spec->kind == ParamKind::kCategorical;
      dim.n_choices = static_cast<int>(spec->choices.size());
      if (!dim.categorical) dim.domain = NumericDomain::For(*spec);
      fit.dims.push_back(dim);
    }
  }
  const std::vector<EstimatorDim>& dims = fit.dims;
  // Rows of the trials that have every parameter of the group, encoded, and their weights.
  const auto encode = [&](std::vector<Observed>::const_iterator from, std::vector<Observed>::const_iterator to,
                          std::vector<std::vector<double>>* rows, std::vector<double>* weights) {
    for (auto t = from; t != to; ++t) {
      std::vector<double> row;
      for (size_t d = 0; d < group.size(); ++d) {
        const auto it = t->params->find(group[d]->name);
        if (it == t->params->end()) break;
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
      if (row.size() == group.size()) {
        rows->push_back(std::move(row));
        weights->push_back(t->weight);
      }
    }
  };
  const auto fit_of = [&](const std::vector<Observed>& trials, double* log_total) {
    std::vector<std::vector<double>> rows;
    std::vector<double> weights;
    encode(trials.begin(), trials.end(), &rows, &weights);
    if (log_total) *log_total = std::log(std::accumulate(weights.begin(), weights.end(), 0.0) + 1);
    return ParzenEstimator(dims, rows, weights, options_.prior_weight);
  };
  if (fresh) {
    fit.l.emplace(fit_of(split.below, nullptr));
    // Where trials failed, a second pair of densities estimates P(feasible | x) as in c-TPE
    // (Watanabe & Hutter 2023), and each candidate's score is weighted by it.
    if (!split.infeasible.empty()) {
      fit.o.emplace(fit_of(split.infeasible, &fit.log_n_failed));
      fit.f.emplace(fit_of(split.feasible, &fit.log_n_ok));
    }
    fit.g.emplace(fit_of(split.above, nullptr));
  } else {  // the batch's proposals since the last one, newest last
    std::vector<std::vector<double>> rows;
    std::vector<double> weights;
    encode(split.above.begin() + static_cast<std::ptrdiff_t>(fit.above_seen), split.above.end(), &rows, &weights);
    for (size_t i = 0; i < rows.size(); ++i) fit.g->Add(rows[i], weights[i]);
  }
  fit.above_seen = split.above.size();
  const ParzenEstimator& l = *fit.l;
  const ParzenEstimator& g = *fit.g;
  const std::optional<ParzenEstimator>& f = fit.f;
  const std::optional<ParzenEstimator>& o = fit.o;
  const double log_n_ok = fit.log_n_ok, log_n_failed = fit.log_n_failed;
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
    (*out)[spec.name] =
        dims[d].categorical ? spec.choices[static_cast<size_t>(best[d])] : dims[d].domain.Decode(spec, best[d]);
  }
}

std::optional<ParamSet> TpeSampler::Ask(std::int64_t number, const TrialHistory& history) {
  SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(number));
  if (Scored(history) < options_.n_startup_trials) return RandomSampler::Draw(space_, rng);
  return Propose(SplitTrials(number, history), rng);
}

std::vector<ParamSet> TpeSampler::AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory& history) {
  std::vector<ParamSet> out;
  out.reserve(numbers.size());  // the liar below points into it
  if (Scored(history) < options_.n_startup_trials) {
    for (std::int64_t n : numbers) {
      SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(n));
      out.push_back(RandomSampler::Draw(space_, rng));
    }
    return out;
  }
  // One split (the linear passes over the history) for the batch; each proposal then joins the
  // "above" set as a running trial, as it would have when asked alone (the newest weigh 1).
  Split split = SplitTrials(-1, history);
  for (std::int64_t n : numbers) {
    SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(n));
    out.push_back(Propose(split, rng));
    if (options_.constant_liar) split.above.push_back({n, &out.back(), 1.0});
  }
  return out;
}

ParamSet TpeSampler::Propose(const Split& split, SplitMix64& rng) const {
  ParamSet out;
  std::vector<const ParamSpec*> joint;
  if (options_.multivariate) {
    // Numeric parameters that are always active share one joint density; categorical ones do
    // better on their own (bench/README.md has the measurements).
    for (const ParamSpec& spec : space_.params()) {
      const bool numeric = spec.kind == ParamKind::kFloat || spec.kind == ParamKind::kInt;
      if (numeric && !SearchSpace::IsConditional(spec)) joint.push_back(&spec);
    }
    if (joint.size() > 1)
      SampleGroup(joint, split, rng, &out);
    else
      joint.clear();
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

Result<ParamValue> SuggestIndependentTpe(std::int64_t number, const ParamSpec& spec, const SamplerOptions& options,
                                         const std::vector<Metric>& metrics, const TrialHistory& history) {
  CS_ASSIGN_OR_RETURN(SearchSpace alone, SearchSpace::Create({spec}));
  SamplerOptions own = options;
  own.seed = ParamSeed(options.seed, spec.name);  // each parameter its own stream
  TpeSampler independent(std::move(alone), own, metrics);
  const std::optional<ParamSet> drawn = independent.Ask(number, history);
  if (!drawn || !drawn->count(spec.name)) return DrawTrialDefined(spec, own.seed, number);
  return drawn->at(spec.name);
}

Result<ParamValue> TpeSampler::SuggestTrialDefined(std::int64_t number, const ParamSpec& spec,
                                                   const ParamSet& /*asked*/, const TrialHistory& history) {
  return SuggestIndependentTpe(number, spec, options_, metrics_, history);
}

}  // namespace cleansweep
