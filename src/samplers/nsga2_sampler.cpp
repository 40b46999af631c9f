#include "samplers/nsga2_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "samplers/numeric_domain.hpp"
#include "samplers/random_sampler.hpp"

namespace cleansweep {
namespace {

// Distribution indices of the two operators (pymoo's defaults): larger keeps children closer to
// their parents.
constexpr double kCrossoverEta = 15;
constexpr double kMutationEta = 20;
// Simulated binary crossover swaps each variable with this probability; the rest come from the
// first parent.
constexpr double kVariableCrossoverProb = 0.5;

// Simulated binary crossover of two points of [0, 1] (Deb and Agrawal, bounded form); one child.
double Sbx(double x1, double x2, SplitMix64& rng) {
  const double r = rng.Uniform();
  const double pick = rng.Uniform();
  if (std::abs(x1 - x2) < 1e-14) return x1;
  const double y1 = std::min(x1, x2), y2 = std::max(x1, x2);
  const double spread = y2 - y1;
  const auto beta_q = [&](double beta) {
    const double alpha = 2 - std::pow(beta, -(kCrossoverEta + 1));
    return r <= 1 / alpha ? std::pow(r * alpha, 1 / (kCrossoverEta + 1))
                          : std::pow(1 / (2 - r * alpha), 1 / (kCrossoverEta + 1));
  };
  const double c1 = 0.5 * (y1 + y2 - beta_q(1 + 2 * y1 / spread) * spread);
  const double c2 = 0.5 * (y1 + y2 + beta_q(1 + 2 * (1 - y2) / spread) * spread);
  return std::clamp(pick < 0.5 ? c1 : c2, 0.0, 1.0);
}

// Polynomial mutation of a point of [0, 1] (Deb and Goyal, bounded form).
double PolynomialMutation(double x, SplitMix64& rng) {
  const double r = rng.Uniform();
  const double power = 1 / (kMutationEta + 1);
  double delta = 0;
  if (r < 0.5) {
    const double v = 2 * r + (1 - 2 * r) * std::pow(1 - x, kMutationEta + 1);
    delta = std::pow(v, power) - 1;
  } else {
    const double v = 2 * (1 - r) + 2 * (r - 0.5) * std::pow(x, kMutationEta + 1);
    delta = 1 - std::pow(v, power);
  }
  return std::clamp(x + delta, 0.0, 1.0);
}

double ToUnit(const NumericDomain& d, const ParamValue& v) {
  return d.width() > 0 ? std::clamp((d.Encode(v) - d.low) / d.width(), 0.0, 1.0) : 0.5;
}

}  // namespace

Nsga2Sampler::Nsga2Sampler(SearchSpace space, SamplerOptions options, std::vector<Metric> metrics)
    : space_(std::move(space)), options_(std::move(options)), metrics_(std::move(metrics)) {
  size_t searched = 0;
  for (const ParamSpec& spec : space_.params()) {
    searched += spec.kind != ParamKind::kFixed;
    const bool numeric = spec.kind == ParamKind::kFloat || spec.kind == ParamKind::kInt;
    domains_.push_back(numeric ? NumericDomain::For(spec) : NumericDomain());
  }
  mutation_prob_ =
      options_.mutation_prob > 0 ? options_.mutation_prob : 1.0 / static_cast<double>(std::max<size_t>(1, searched));
}

void Nsga2Sampler::Update(const TrialHistory& history) {
  if (seen_ == history.finished.size()) return;
  std::vector<Member> fresh;
  for (; seen_ < history.finished.size(); ++seen_) {
    const TrialRecord& r = history.finished[seen_];
    if (r.state != TrialState::kComplete) continue;
    std::vector<double> values = r.values;
    if (values.empty() && r.value && metrics_.size() == 1) values = {*r.value};
    if (values.size() != metrics_.size()) continue;
    ++scored_;
    Point point = Minimized(metrics_, values);
    if (r.infeasible()) {  // constrained domination: behind every feasible trial, by its violation
      fresh.push_back({std::move(point), r.violation, seen_, 0, 0});
      continue;
    }
    // Dominated by a whole population's worth of parents, it ranks behind all of them and so does
    // everything it dominates: selection would come out the same without it.
    size_t dominating = 0;
    for (const Member& m : population_) dominating += m.violation <= 0 && Dominates(m.point, point);
    if (dominating >= static_cast<size_t>(options_.population_size)) continue;
    fresh.push_back({std::move(point), 0, seen_, 0, 0});
  }
  if (fresh.empty()) return;
  const size_t added = fresh.size();
  std::vector<Member> pool = std::move(population_);
  pool.reserve(pool.size() + fresh.size());
  for (Member& m : fresh) pool.push_back(std::move(m));
  // Elitist selection: whole fronts while they fit, then the most isolated of the front that
  // does not (crowding distance, largest first).
  // Constrained domination (Deb 2002): feasible trials by non-dominated rank; infeasible ones after
  // all of them, each its own rank in order of violation.
  std::stable_partition(pool.begin(), pool.end(), [](const Member& m) { return m.violation <= 0; });
  const auto feasible =
      static_cast<size_t>(std::count_if(pool.begin(), pool.end(), [](const Member& m) { return m.violation <= 0; }));
  std::stable_sort(pool.begin() + static_cast<std::ptrdiff_t>(feasible), pool.end(),
                   [](const Member& a, const Member& b) { return a.violation < b.violation; });
  // The points move out of the pool for the sort and back into the members that are kept.
  std::vector<Point> points;
  points.reserve(pool.size());
  for (size_t i = 0; i < feasible; ++i) points.push_back(std::move(pool[i].point));
  std::vector<int> ranks;
  if (added == 1 && feasible == pool.size()) {
    std::vector<int> kept(pool.size() - 1);
    for (size_t i = 0; i < kept.size(); ++i) kept[i] = pool[i].rank;
    ranks = RanksWithOneMore(points, std::move(kept));
  }
  if (ranks.empty()) ranks = NondominatedRanks(points);
  const int next_rank = ranks.empty() ? 0 : *std::max_element(ranks.begin(), ranks.end()) + 1;
  for (size_t i = feasible; i < pool.size(); ++i) {
    ranks.push_back(next_rank + static_cast<int>(i - feasible));
    points.push_back(std::move(pool[i].point));
  }
  std::vector<size_t> by_rank(pool.size());
  std::iota(by_rank.begin(), by_rank.end(), 0);
  // Stable, so among equals the earlier trial stays: selection does not depend on the sort.
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  const auto target = static_cast<size_t>(options_.population_size);
  population_.clear();
  population_.reserve(target);
  for (size_t begin = 0; begin < by_rank.size() && population_.size() < target;) {
    size_t end = begin;
    while (end < by_rank.size() && ranks[by_rank[end]] == ranks[by_rank[begin]]) ++end;
    std::vector<Point> front_points;
    for (size_t k = begin; k < end; ++k) front_points.push_back(std::move(points[by_rank[k]]));
    const std::vector<double> crowding = CrowdingDistances(front_points);
    std::vector<size_t> order(end - begin);
    std::iota(order.begin(), order.end(), 0);
    if (population_.size() + order.size() > target) {  // the front that does not fit whole
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return crowding[a] > crowding[b]; });
    }
    for (size_t k = 0; k < order.size() && population_.size() < target; ++k) {
      Member m = std::move(pool[by_rank[begin + order[k]]]);
      m.point = std::move(front_points[order[k]]);
      m.rank = ranks[by_rank[begin]];
      m.crowding = crowding[order[k]];
      population_.push_back(std::move(m));
    }
    begin = end;
  }
}

const Nsga2Sampler::Member& Nsga2Sampler::Tournament(SplitMix64& rng) const {
  const Member& a = population_[rng.Below(population_.size())];
  const Member& b = population_[rng.Below(population_.size())];
  if (a.rank != b.rank) return a.rank < b.rank ? a : b;
  return b.crowding > a.crowding ? b : a;
}

ParamSet Nsga2Sampler::Child(const TrialHistory& history, SplitMix64& rng) const {
  const ParamSet& first = history.finished[Tournament(rng).trial].params;
  const ParamSet& second = history.finished[Tournament(rng).trial].params;
  const bool crossover = rng.Uniform() < options_.crossover_prob;
  const std::uint64_t forced_draw = rng.Next();
  ParamSet child = Breed(first, second, crossover, rng, std::nullopt);
  if (child != first && child != second) return child;
  // A copy of a parent would run a finished trial again: the same child with one parameter
  // mutated for sure, a category to another choice (searched parameters in turn, from a random
  // one, until the child differs: an integer's mutation can round back to its value).
  std::vector<size_t> searched;
  for (size_t p = 0; p < space_.params().size(); ++p) {
    if (space_.params()[p].kind != ParamKind::kFixed) searched.push_back(p);
  }
  for (size_t k = 0; k < searched.size(); ++k) {
    child = Breed(first, second, crossover, rng, searched[(forced_draw + k) % searched.size()]);
    if (child != first && child != second) break;
  }
  return child;
}

ParamSet Nsga2Sampler::Breed(const ParamSet& first, const ParamSet& second, bool crossover, SplitMix64 rng,
                             std::optional<size_t> forced) const {
  ParamSet child;  // filled in space order: the end is the right hint whenever names sort the same way
  for (size_t p = 0; p < space_.params().size(); ++p) {
    const ParamSpec& spec = space_.params()[p];
    // Every draw is made whatever the branch, so one parameter's path never shifts another's.
    const double swap = rng.Uniform();
    const double mutate = rng.Uniform();
    const double fresh = rng.Uniform();
    SplitMix64 operator_rng(rng.Next());
    if (!SearchSpace::IsActive(spec, child)) continue;
    if (spec.kind == ParamKind::kFixed) {
      child.emplace_hint(child.end(), spec.name, spec.fixed_value);
      continue;
    }
    const auto a = first.find(spec.name);
    const auto b = second.find(spec.name);
    const bool has_a = a != first.end(), has_b = b != second.end();
    if (!has_a && !has_b) {  // active now, in neither parent: a branch they never took
      child.emplace_hint(child.end(), spec.name,
                         spec.kind == ParamKind::kCategorical
                             ? spec.choices[static_cast<size_t>(fresh * static_cast<double>(spec.choices.size()))]
                             : SearchSpace::FromUnit(spec, fresh));
      continue;
    }
    if (spec.kind == ParamKind::kCategorical) {
      ParamValue v = !has_a                                                     ? b->second
                     : (!has_b || !crossover || swap >= options_.swapping_prob) ? a->second
                                                                                : b->second;
      if (forced == p && spec.choices.size() > 1) {  // any choice but the one it has
        // (A value no longer among the choices, from an older config, may become any of them.)
        const std::optional<int> at = ChoiceIndex(spec, v);
        auto other = static_cast<size_t>(fresh * static_cast<double>(spec.choices.size() - (at ? 1 : 0)));
        if (at && other >= static_cast<size_t>(*at)) ++other;
        v = spec.choices[other];
      } else if (mutate < mutation_prob_) {
        v = spec.choices[static_cast<size_t>(fresh * static_cast<double>(spec.choices.size()))];
      }
      child.emplace_hint(child.end(), spec.name, v);
      continue;
    }
    const NumericDomain& domain = domains_[p];
    double u = ToUnit(domain, has_a ? a->second : b->second);
    if (has_a && has_b && crossover && swap < kVariableCrossoverProb)
      u = Sbx(u, ToUnit(domain, b->second), operator_rng);
    if (mutate < mutation_prob_ || forced == p) u = PolynomialMutation(u, operator_rng);
    child.emplace_hint(child.end(), spec.name, domain.Decode(spec, domain.low + u * domain.width()));
  }
  return child;
}

std::optional<ParamSet> Nsga2Sampler::Ask(std::int64_t number, const TrialHistory& history) {
  Update(history);
  SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(number));
  if (scored_ < static_cast<size_t>(options_.population_size) || population_.empty()) {
    return RandomSampler::Draw(space_, rng);
  }
  return Child(history, rng);
}

}  // namespace cleansweep
