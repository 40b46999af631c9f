#include "pruners/pruner.hpp"

#include "pruners/hyperband_pruner.hpp"
#include "pruners/median_pruner.hpp"
#include "pruners/successive_halving_pruner.hpp"

namespace cleansweep {

std::unique_ptr<Pruner> MakePruner(const PrunerOptions& options, Direction direction) {
  if (options.kind == "median") return std::make_unique<MedianPruner>(options, direction);
  if (options.kind == "asha") {
    return std::make_unique<SuccessiveHalvingPruner>(options, direction, options.min_early_stopping_rate);
  }
  if (options.kind == "hyperband") return std::make_unique<HyperbandPruner>(options, direction);
  return nullptr;
}

}  // namespace cleansweep
