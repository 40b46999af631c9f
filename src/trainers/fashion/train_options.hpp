// The trainer's hyperparameters: defaults, then CLEANSWEEP_PARAMS (inside a sweep), then flags.
#pragma once

#include <cstdint>
#include <string>

#include <cleansweep/trial.hpp>

namespace cleansweep::fashion {

struct TrainOptions {
  double lr = 1e-3;
  int batch_size = 64;
  std::string optimizer = "adam";  // sgd | adam | adamw
  double momentum = 0.9;           // sgd only
  double weight_decay = 0.0;
  int blocks = 2;       // conv blocks, each halving the image; 1..4
  int channels = 32;    // first block; doubles per block
  int kernel_size = 3;  // odd, 1..7
  double dropout = 0.25;
  int epochs = 3;
  int subset = 0;  // training examples; 0 = all 50,000 left after validation
  int val_size = 10000;
  std::uint64_t seed = 0;
  std::string data_dir;
  std::string device = "auto";    // auto | cpu | cuda
  int threads = 0;                // intra-op threads; 0 = libtorch's default (OMP_NUM_THREADS)
  bool startup_only = false;      // report 0 at once and exit: what starting a trial costs (bench/)
  bool first_batch_only = false;  // load the data, train one batch, report its loss, exit (bench/)
  // Also measure inference latency (one image, median ms) and report {val_accuracy, latency_ms} as
  // the final values of a two-metric study (configs/fashion_multiobjective.yaml).
  bool report_latency = false;
  // Seconds to wait after each epoch's checkpoint for the sweep's verdict on that epoch (a prune, or
  // a pause at a rung or a PBT interval) before training the next: Trial::ShouldPrune's wait.
  // Negative: 2% of the epoch's time, at most 1 s.
  double verdict_wait = -1;
};

// Parses the command line over the trial's parameters. Returns false after printing the reason
// (or the help text) to stderr; `exit_code` says how to exit then.
bool ParseOptions(int argc, char** argv, const Trial& trial, TrainOptions* options, int* exit_code);

}  // namespace cleansweep::fashion
