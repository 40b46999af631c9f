#include "fashion/train_options.hpp"

#include <cstdio>
#include <set>

#include <CLI/CLI.hpp>

#include "fashion/fashion_mnist.hpp"

namespace cleansweep::fashion {
namespace {

// Parameter names a sweep may set; each maps to the flag of the same name (with - for _).
const std::set<std::string> kKnownParams = {"lr",     "batch_size", "optimizer",   "momentum", "weight_decay",
                                            "blocks", "channels",   "kernel_size", "dropout",  "epochs",
                                            "subset", "val_size",   "seed"};

void ApplyParams(const Trial& t, TrainOptions* o) {
  o->lr = t.GetDouble("lr", o->lr);
  o->batch_size = static_cast<int>(t.GetInt("batch_size", o->batch_size));
  o->optimizer = t.GetString("optimizer", o->optimizer);
  o->momentum = t.GetDouble("momentum", o->momentum);
  o->weight_decay = t.GetDouble("weight_decay", o->weight_decay);
  o->blocks = static_cast<int>(t.GetInt("blocks", o->blocks));
  o->channels = static_cast<int>(t.GetInt("channels", o->channels));
  o->kernel_size = static_cast<int>(t.GetInt("kernel_size", o->kernel_size));
  o->dropout = t.GetDouble("dropout", o->dropout);
  o->epochs = static_cast<int>(t.GetInt("epochs", o->epochs));
  o->subset = static_cast<int>(t.GetInt("subset", o->subset));
  o->val_size = static_cast<int>(t.GetInt("val_size", o->val_size));
  o->seed = static_cast<std::uint64_t>(t.GetInt("seed", static_cast<std::int64_t>(o->seed)));
}

std::string Check(const TrainOptions& o) {
  if (!(o.lr > 0)) return "lr must be > 0";
  if (o.batch_size < 1) return "batch_size must be >= 1";
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw") {
    return "optimizer must be sgd, adam or adamw, got '" + o.optimizer + "'";
  }
  if (o.momentum < 0 || o.momentum >= 1) return "momentum must be in [0, 1)";
  if (o.weight_decay < 0) return "weight_decay must be >= 0";
  if (o.blocks < 1 || o.blocks > 4) return "blocks must be between 1 and 4";
  if (o.channels < 1 || o.channels > 1024) return "channels must be between 1 and 1024";
  if (o.kernel_size < 1 || o.kernel_size > 7 || o.kernel_size % 2 == 0) return "kernel_size must be odd, 1 to 7";
  if (o.dropout < 0 || o.dropout >= 1) return "dropout must be in [0, 1)";
  if (o.epochs < 1) return "epochs must be >= 1";
  if (o.subset < 0) return "subset must be >= 0";
  if (o.device != "auto" && o.device != "cpu" && o.device != "cuda") return "device must be auto, cpu or cuda";
  return "";
}

}  // namespace

bool ParseOptions(int argc, char** argv, const Trial& trial, TrainOptions* o, int* exit_code) {
  for (const auto& [name, value] : trial.params()) {
    if (!kKnownParams.count(name)) {
      std::fprintf(stderr,
                   "cleansweep-train-fashion: unknown parameter '%s' in the search space (known: lr, "
                   "batch_size, optimizer, momentum, weight_decay, blocks, channels, kernel_size, dropout, "
                   "epochs, subset, val_size, seed)\n",
                   name.c_str());
      *exit_code = 2;
      return false;
    }
  }
  try {
    ApplyParams(trial, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cleansweep-train-fashion: %s\n", e.what());
    *exit_code = 2;
    return false;
  }
  o->data_dir = kDefaultDataDir;
  CLI::App app{"Train a CNN on Fashion-MNIST with libtorch; reports validation accuracy to cleansweep"};
  app.add_option("--lr", o->lr, "Learning rate");
  app.add_option("--batch-size", o->batch_size, "Mini-batch size");
  app.add_option("--optimizer", o->optimizer, "sgd, adam or adamw");
  app.add_option("--momentum", o->momentum, "SGD momentum");
  app.add_option("--weight-decay", o->weight_decay, "Weight decay");
  app.add_option("--blocks", o->blocks, "Convolution blocks (1-4)");
  app.add_option("--channels", o->channels, "Channels of the first block (doubled per block)");
  app.add_option("--kernel-size", o->kernel_size, "Convolution kernel size (odd)");
  app.add_option("--dropout", o->dropout, "Dropout before the classifier layers");
  app.add_option("--epochs", o->epochs, "Training epochs");
  app.add_option("--subset", o->subset, "Training examples to use (0 = all)");
  app.add_option("--val-size", o->val_size, "Examples held out for validation");
  app.add_option("--seed", o->seed, "Random seed");
  app.add_option("--data-dir", o->data_dir, "Folder with the Fashion-MNIST IDX .gz files");
  app.add_option("--device", o->device, "auto, cpu or cuda");
  app.add_option("--threads", o->threads, "Intra-op CPU threads (0 = default)");
  app.add_option("--verdict-wait", o->verdict_wait,
                 "Seconds to wait after each epoch's checkpoint for the sweep's verdict before the next epoch "
                 "(a trial that does not wait trains one more epoch before it sees a prune or a pause); "
                 "negative: 2% of the epoch's time, at most 1 s");
  app.add_flag("--startup-only", o->startup_only,
               "Make one tensor, report 0 and exit, with no data and no training (bench/launch_bench)");
  app.add_flag("--first-batch-only", o->first_batch_only,
               "Load the data, train one batch, report its loss as step 0 and exit (bench/launch_bench)");
  app.add_flag("--report-latency", o->report_latency,
               "Also measure inference latency (one image, median ms) and report val_accuracy and latency_ms");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = app.exit(e) == 0 ? 0 : 2;
    return false;
  }
  if (const std::string problem = Check(*o); !problem.empty()) {
    std::fprintf(stderr, "cleansweep-train-fashion: %s\n", problem.c_str());
    *exit_code = 2;
    return false;
  }
  return true;
}

}  // namespace cleansweep::fashion
