// One training run: builds the model and optimiser, trains for the given epochs and reports the
// validation accuracy after each epoch through the trial (step = epochs done), stopping early when
// the sweep prunes it.
#pragma once

#include "fashion/fashion_mnist.hpp"
#include "fashion/train_options.hpp"

namespace cleansweep::fashion {

struct TrainResult {
  double val_accuracy = 0;
  int epochs = 0;       // epochs actually trained
  bool pruned = false;  // the sweep stopped it early
  std::int64_t parameters = 0;
  double seconds = 0;
  double latency_ms = 0;  // with report_latency: one image's forward pass, median of repeated runs
};

// Throws what libtorch throws (c10::Error on CUDA out of memory, std::bad_alloc on host OOM).
TrainResult Train(const TrainOptions& options, const Dataset& data, torch::Device device, Trial& trial);

}  // namespace cleansweep::fashion
