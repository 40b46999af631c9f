// logreg-trainer: the trainer as a program (trial.launcher: spawn, the default).
#include "train.hpp"

int main(int argc, char** argv) { return TrainMain(argc, argv); }
