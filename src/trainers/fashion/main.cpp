// cleansweep-train-fashion: the trainer as a program of its own (trial.launcher: spawn).
#include "fashion/trainer_main.hpp"

int main(int argc, char** argv) { return cleansweep::fashion::TrainerMain(argc, argv); }
