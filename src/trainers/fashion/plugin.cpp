// cleansweep-train-fashion.so: the trainer as a fork-server plugin (trial.launcher: forkserver).
// The server loads it, and with it libtorch, once; every trial is a fresh fork that runs
// TrainerMain and creates its own CUDA context.
#include <cleansweep/trial.hpp>

#include "fashion/trainer_main.hpp"

CLEANSWEEP_TRIAL_PLUGIN(cleansweep::fashion::TrainerMain)
