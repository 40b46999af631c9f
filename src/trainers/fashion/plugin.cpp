// cleansweep-train-fashion.so: the trainer as a fork-server plugin (trial.launcher: forkserver).
// The server loads it, and with it libtorch, once, then runs PrepareData: the training set read
// and decoded once, shared copy-on-write by every trial. Every trial is a fresh fork that runs
// TrainerMain and creates its own CUDA context.
#include <cleansweep/trial.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fashion/fashion_mnist.hpp"
#include "fashion/trainer_main.hpp"

namespace {

// The default data folder, the one trials read unless given --data-dir (CLEANSWEEP_FASHION_PRELOAD=0
// in the worker's environment turns this off). No CUDA, no libtorch
// thread pool (docs/fork-server.md: what prepare may do). A folder that cannot be read is not an
// error here: each trial then reads its own --data-dir, and says what is wrong with it.
int PrepareData() {
  if (const char* preload = std::getenv("CLEANSWEEP_FASHION_PRELOAD"); preload && std::string(preload) == "0") {
    return 0;  // bench/run_launch_bench.sh measures what the preload saves
  }
  try {
    cleansweep::fashion::Preload(cleansweep::fashion::kDefaultDataDir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cleansweep-train-fashion.so: not preloading the data set (%s); each trial reads it\n",
                 e.what());
  }
  return 0;
}

}  // namespace

CLEANSWEEP_TRIAL_PLUGIN(cleansweep::fashion::TrainerMain)
CLEANSWEEP_TRIAL_PREPARE(PrepareData)
