// The trainer's whole program, shared by its executable and its fork-server plugin.
#pragma once

namespace cleansweep::fashion {

// Trains once as trial.command asks (see trainer_main.cpp for the exit statuses).
int TrainerMain(int argc, char** argv);

}  // namespace cleansweep::fashion
