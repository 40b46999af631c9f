// Sampler: proposes the parameters of the next trial. Pure: no I/O, no MPI, no clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

class Sampler {
 public:
  virtual ~Sampler() = default;

  // Parameters for trial `number`, given everything finished and running so far; nullopt when
  // the sampler has nothing left to propose (a grid that is used up). Called on rank 0 only.
  virtual std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) = 0;

  // A proposal to complete a partial configuration from `enqueue:` with. The default asks as for
  // any trial; the grid sampler returns nothing rather than spend a grid point on it.
  virtual ParamSet ProposalFor(std::int64_t number, const TrialHistory& history) {
    return Ask(number, history).value_or(ParamSet());
  }

  // Proposals for several fresh trials at once, when a turn of the coordinator finds many workers
  // free: TPE then fits its densities once for the whole batch instead of once per trial, and
  // counts the batch's earlier proposals as running. Only called when AsksInBatches().
  virtual bool AsksInBatches() const { return false; }
  virtual std::vector<ParamSet> AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory& history) {
    std::vector<ParamSet> out;
    for (std::int64_t n : numbers) out.push_back(Ask(n, history).value_or(ParamSet()));
    return out;
  }
  // The most distinct proposals this sampler can make, if finite (grid size).
  virtual std::optional<std::int64_t> Capacity() const { return std::nullopt; }

  // Population-based training: parameters for trial `number`, which starts from the checkpoint of
  // a trial that had `parent` (the explore step); nullopt for samplers that do not derive.
  virtual std::optional<ParamSet> Derive(std::int64_t /*number*/, const ParamSet& /*parent*/) { return std::nullopt; }
  // How many trials it draws afresh before it only derives (pbt: its population); none by default.
  virtual std::optional<std::int64_t> FreshLimit() const { return std::nullopt; }

  // Define-by-run (docs/samplers.md, "Parameters the trial defines"): a value for `spec`, which
  // trial `number` asks for while it runs and the config does not declare; `asked` holds the
  // trial's parameters so far, `history` every trial's, trial-defined ones included. By default an
  // independent random draw that depends only on (seed, number, name); TPE and the GP learn from
  // the trials that had the parameter; the grid refuses (InvalidInput, the reason for the trial).
  virtual Result<ParamValue> SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& asked,
                                                 const TrialHistory& history);
  void set_trial_defined_seed(std::uint64_t seed) { trial_defined_seed_ = seed; }

 protected:
  std::uint64_t trial_defined_seed_ = 0;  // MakeSampler sets it from sampler.seed
};

// The seed of parameter `name`'s own random stream, from a sampler's seed: draws of two
// parameters of one trial are independent.
std::uint64_t ParamSeed(std::uint64_t seed, const std::string& name);
// One random draw of `spec` for trial `number` (the default SuggestTrialDefined).
ParamValue DrawTrialDefined(const ParamSpec& spec, std::uint64_t seed, std::int64_t number);

// Trial `number`'s parameters for the enqueued (possibly partial) configuration `fixed`: its
// values, the rest from the sampler's proposal, and random values for parameters that neither
// covers (ones that `fixed` makes active). Parameters `fixed` makes inactive are dropped.
ParamSet CompleteEnqueued(Sampler& sampler, const StudyConfig& config, const ParamSet& fixed, std::int64_t number,
                          const TrialHistory& history);

// Builds the sampler `options.kind` names. InvalidInput (with the config file and line) when the
// space does not suit it, e.g. a float parameter without grid points for the grid sampler.
Result<std::unique_ptr<Sampler>> MakeSampler(const StudyConfig& config);

}  // namespace cleansweep
