// Parameters a trial defines while it runs (define-by-run, docs/trial-protocol.md "Asking for a
// parameter"): the request a trial writes, `{"suggest": {"name": "lr", "type": "float", "low": 1e-5,
// "high": 0.1, "log": true}}`, read into a ParamSpec; the distribution as the study file stores it;
// and the checks a request must pass before anything is sampled or recorded.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "space/parameter.hpp"
#include "util/status.hpp"

namespace cleansweep {

// Limits on what a trial may ask (each refused with a protocol FAIL that names it).
inline constexpr size_t kMaxTrialDefinedParams = 1000;   // distinct names one trial may ask for
inline constexpr size_t kMaxSuggestRequests = 10'000;    // requests one trial may make, repeats included
inline constexpr size_t kMaxTrialDefinedNameBytes = 64;  // a name, in bytes
inline constexpr size_t kMaxDistributionBytes = 512;     // a distribution as JSON (the study file's field)
inline constexpr size_t kMaxChoiceBytes = 200;           // one text choice
// Bounds a trial may give, in magnitude: beyond 2^53 an int is not exact in a double (nor in the
// JSON readers), and a float range wider than this is a unit error, not a search space.
inline constexpr double kMaxTrialDefinedBound = 9007199254740992.0;

// Reads the object under "suggest". InvalidInput with what is wrong and what would be right
// (an unknown type, low > high, log with low <= 0, a step that does not divide the range, ...).
Result<ParamSpec> ParseSuggestRequest(const nlohmann::json& request);

// The distribution of `spec` as compact JSON: {"type":"float","low":1e-05,"high":0.1,"log":true},
// {"type":"int","low":1,"high":8,"step":1,"log":false}, {"type":"categorical","choices":[...]}.
// It is what the study file's /params rows hold and what the worker sends rank 0.
std::string DistributionJson(const ParamSpec& spec);
// The inverse: a ParamSpec named `name`. InvalidInput when the text is not one.
Result<ParamSpec> DistributionFromJson(const std::string& name, const std::string& text);

// The same distribution: type, bounds, log, step and choices alike (a declared `space:` entry's
// `when:` and grid do not count).
bool SameDistribution(const ParamSpec& a, const ParamSpec& b);
// One line for messages: "float in [1e-05, 0.1], log", "int in [1, 8] step 2", "categorical of [adam, sgd]".
std::string DescribeDistribution(const ParamSpec& spec);

}  // namespace cleansweep
