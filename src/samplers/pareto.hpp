// Pareto dominance over a study's metrics. Every function here works on points whose components
// are all to be minimised: Minimized() turns a trial's values into one (maximised metrics negated).
#pragma once

#include <vector>

#include "config/study_config.hpp"

namespace cleansweep {

using Point = std::vector<double>;

// `values` in study.metrics order, each maximised metric negated.
Point Minimized(const std::vector<Metric>& metrics, const std::vector<double>& values);

// `a` is no worse than `b` in every component and better in at least one.
bool Dominates(const Point& a, const Point& b);
// `a` is no worse than `b` in every component (equal points weakly dominate each other).
bool WeaklyDominates(const Point& a, const Point& b);

// Non-dominated sorting: each point's front, 0 for the points nothing dominates, 1 for those
// only front 0 dominates, and so on. O(M N^2) for N points of M components; O(N log N) for two.
std::vector<int> NondominatedRanks(const std::vector<Point>& points);

// NondominatedRanks(points) when only the last point is new and `ranks` are those the others have
// among themselves (NSGA-II's population: what selection left out never dominated what it kept).
// Unless the new point dominates one of them, theirs stay and its own is one past its highest
// dominator's: 2N domination tests instead of a full sort. Empty when it dominates one (then the
// full sort is needed).
std::vector<int> RanksWithOneMore(const std::vector<Point>& points, std::vector<int> ranks);

// NSGA-II's crowding distance of each point within one front: the sum over components of the gap
// between its neighbours, divided by the front's range; infinite at a component's extremes.
std::vector<double> CrowdingDistances(const std::vector<Point>& front);

// The volume the points dominate inside the box bounded by `reference` (minimisation: a point
// counts only where it is below the reference in every component). Exact: a sweep for two
// components, slicing along the last component for more; meant for fronts of hundreds of points.
double Hypervolume(std::vector<Point> points, const Point& reference);

}  // namespace cleansweep
