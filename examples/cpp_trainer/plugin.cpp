// logreg-trainer.so: the same trainer as a fork-server plugin (trial.launcher: forkserver).
#include <cleansweep/trial.hpp>

#include "train.hpp"

CLEANSWEEP_TRIAL_PLUGIN(TrainMain)
