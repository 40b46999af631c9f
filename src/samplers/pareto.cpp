#include "samplers/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "util/status.hpp"

namespace cleansweep {

Point Minimized(const std::vector<Metric>& metrics, const std::vector<double>& values) {
  CS_CHECK(metrics.size() == values.size());
  Point out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = metrics[i].direction == Direction::kMaximize ? -values[i] : values[i];
  }
  return out;
}

bool WeaklyDominates(const Point& a, const Point& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
  }
  return true;
}

bool Dominates(const Point& a, const Point& b) {
  bool better = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    better = better || a[i] < b[i];
  }
  return better;
}

namespace {

// Two components: Jensen's sweep ("Reducing the run-time complexity of multiobjective EAs",
// IEEE TEC 2003), O(N log N). In order of (first, second), a point is dominated by front k exactly
// when some member of k has a second component no larger (and is not the same point), so it joins
// the first front whose smallest second component exceeds its own; those smallest values grow
// with k, so a binary search finds it. Equal points share their front.
std::vector<int> NondominatedRanks2(const std::vector<Point>& points) {
  const size_t n = points.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&points](size_t a, size_t b) {
    return points[a][0] != points[b][0] ? points[a][0] < points[b][0] : points[a][1] < points[b][1];
  });
  std::vector<int> rank(n, 0);
  std::vector<double> lowest;  // per front: the smallest second component of its members so far
  for (size_t k = 0; k < n; ++k) {
    const Point& p = points[order[k]];
    if (k > 0 && p == points[order[k - 1]]) {  // a copy of the point before: the same front
      rank[order[k]] = rank[order[k - 1]];
      continue;
    }
    const auto front = static_cast<size_t>(std::upper_bound(lowest.begin(), lowest.end(), p[1]) - lowest.begin());
    if (front == lowest.size()) {
      lowest.push_back(p[1]);
    } else {
      lowest[front] = p[1];
    }
    rank[order[k]] = static_cast<int>(front);
  }
  return rank;
}

}  // namespace

std::vector<int> NondominatedRanks(const std::vector<Point>& points) {
  const size_t n = points.size();
  const size_t m = n ? points[0].size() : 0;
  const auto is_nan = [](const Point& p) { return std::isnan(p[0]) || std::isnan(p[1]); };
  if (m == 2 && std::none_of(points.begin(), points.end(), is_nan)) return NondominatedRanks2(points);
  std::vector<double> flat;  // contiguous: the pair loop below is the sampler's hot spot
  flat.reserve(n * m);
  for (const Point& p : points) flat.insert(flat.end(), p.begin(), p.end());
  std::vector<char> dominates(n * n, 0);  // [i * n + j]: i dominates j
  std::vector<int> dominated_by(n, 0);    // how many points dominate each one
  for (size_t i = 0; i < n; ++i) {
    const double* a = flat.data() + i * m;
    for (size_t j = i + 1; j < n; ++j) {
      const double* b = flat.data() + j * m;
      bool a_better = false, b_better = false;  // one pass decides both directions
      for (size_t k = 0; k < m; ++k) {
        a_better |= a[k] < b[k];
        b_better |= b[k] < a[k];
      }
      if (a_better != b_better) {
        const size_t winner = a_better ? i : j, loser = a_better ? j : i;
        dominates[winner * n + loser] = 1;
        ++dominated_by[loser];
      }
    }
  }
  std::vector<int> rank(n, 0);
  std::vector<size_t> current;
  for (size_t i = 0; i < n; ++i) {
    if (dominated_by[i] == 0) current.push_back(i);
  }
  for (int front = 0; !current.empty(); ++front) {
    std::vector<size_t> next;
    for (size_t i : current) {
      rank[i] = front;
      for (size_t j = 0; j < n; ++j) {
        if (dominates[i * n + j] && --dominated_by[j] == 0) next.push_back(j);
      }
    }
    current = std::move(next);
  }
  return rank;
}

std::vector<int> RanksWithOneMore(const std::vector<Point>& points, std::vector<int> ranks) {
  const Point& fresh = points.back();
  int rank = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    if (Dominates(fresh, points[i])) return {};
    if (Dominates(points[i], fresh)) rank = std::max(rank, ranks[i] + 1);
  }
  ranks.push_back(rank);
  return ranks;
}

std::vector<double> CrowdingDistances(const std::vector<Point>& front) {
  const size_t n = front.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> distance(n, n <= 2 ? inf : 0);  // with two or fewer, all are extremes
  if (n <= 2) return distance;
  std::vector<size_t> order(n);
  for (size_t m = 0; m < front[0].size(); ++m) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return front[a][m] < front[b][m]; });
    const double range = front[order.back()][m] - front[order.front()][m];
    distance[order.front()] = distance[order.back()] = inf;
    if (!(range > 0)) continue;
    for (size_t k = 1; k + 1 < n; ++k) {
      distance[order[k]] += (front[order[k + 1]][m] - front[order[k - 1]][m]) / range;
    }
  }
  return distance;
}

namespace {

// Points already inside the box (strictly below the reference everywhere), any count of components.
double BoxedHypervolume(std::vector<Point> points, const Point& reference) {
  if (points.empty()) return 0;
  const size_t d = reference.size();
  if (d == 1) {
    double lowest = reference[0];
    for (const Point& p : points) lowest = std::min(lowest, p[0]);
    return reference[0] - lowest;
  }
  if (d == 2) {  // sweep in the first component; each point adds the strip its second one opens
    std::sort(points.begin(), points.end());
    double volume = 0;
    double ceiling = reference[1];
    for (const Point& p : points) {
      if (p[1] < ceiling) {
        volume += (reference[0] - p[0]) * (ceiling - p[1]);
        ceiling = p[1];
      }
    }
    return volume;
  }
  if (d == 3) {  // a sweep along the third component over a 2-D staircase: O(n^2), not the slicing's O(n^3)
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a[2] < b[2]; });
    std::map<double, double> stairs;  // first component -> second, both strictly monotone: a 2-D front
    double volume = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      const double x = points[i][0], y = points[i][1];
      auto next = stairs.upper_bound(x);  // first with a larger x
      const bool dominated = next != stairs.begin() && std::prev(next)->second <= y;
      if (!dominated) {
        // Drop the steps it dominates: x' >= x and y' >= y.
        auto it = stairs.lower_bound(x);
        while (it != stairs.end() && it->second >= y) it = stairs.erase(it);
        stairs[x] = y;
      }
      const double top = i + 1 < points.size() ? points[i + 1][2] : reference[2];
      const double height = top - points[i][2];
      if (height <= 0) continue;
      double area = 0, ceiling = reference[1];
      for (const auto& [sx, sy] : stairs) {
        area += (reference[0] - sx) * (ceiling - sy);
        ceiling = sy;
      }
      volume += height * area;
    }
    return volume;
  }
  // Slice along the last component: between consecutive levels, the slab's cross-section is the
  // (d-1)-dimensional volume of every point at or below the lower level.
  std::sort(points.begin(), points.end(), [d](const Point& a, const Point& b) { return a[d - 1] < b[d - 1]; });
  const Point lower_reference(reference.begin(), reference.end() - 1);
  double volume = 0;
  std::vector<Point> below;
  for (size_t i = 0; i < points.size(); ++i) {
    below.emplace_back(points[i].begin(), points[i].end() - 1);
    const double top = i + 1 < points.size() ? points[i + 1][d - 1] : reference[d - 1];
    const double height = top - points[i][d - 1];
    if (height > 0) {
      // Only the non-dominated part of the slice matters; dropping the rest keeps recursion small.
      std::vector<Point> front;
      for (const Point& p : below) {
        bool dominated = false;
        for (const Point& q : below) {
          if (&p != &q && Dominates(q, p)) {
            dominated = true;
            break;
          }
        }
        if (!dominated) front.push_back(p);
      }
      below = front;
      volume += height * BoxedHypervolume(front, lower_reference);
    }
  }
  return volume;
}

}  // namespace

double Hypervolume(std::vector<Point> points, const Point& reference) {
  std::vector<Point> inside;
  for (Point& p : points) {
    CS_CHECK(p.size() == reference.size());
    bool in = true;
    for (size_t i = 0; i < p.size(); ++i) in = in && p[i] < reference[i];
    if (in) inside.push_back(std::move(p));
  }
  return BoxedHypervolume(std::move(inside), reference);
}

}  // namespace cleansweep
