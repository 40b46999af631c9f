#include "fashion/training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "fashion/model.hpp"

namespace cleansweep::fashion {
namespace {

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const TrainOptions& o, ConvNet& model) {
  if (o.optimizer == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        model->parameters(), torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  }
  if (o.optimizer == "adamw") {
    return std::make_unique<torch::optim::AdamW>(model->parameters(),
                                                 torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(model->parameters(),
                                              torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
}

double Accuracy(ConvNet& model, const Split& split, torch::Device device) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::int64_t correct = 0;
  const std::int64_t n = split.images.size(0);
  for (std::int64_t start = 0; start < n; start += 1000) {
    const std::int64_t end = std::min(n, start + 1000);
    const torch::Tensor logits = model->forward(split.images.slice(0, start, end).to(device));
    correct += logits.argmax(1).eq(split.labels.slice(0, start, end).to(device)).sum().item<std::int64_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

// What serving one image costs the trained model: the median of repeated single-image forward
// passes after a warm-up (CUDA work is synchronised by reading the result back).
double InferenceLatencyMs(ConvNet& model, const Split& split, torch::Device device) {
  torch::NoGradGuard no_grad;
  model->eval();
  const torch::Tensor image = split.images.slice(0, 0, 1).to(device);
  std::vector<double> ms;
  for (int i = 0; i < 55; ++i) {
    const auto start = std::chrono::steady_clock::now();
    (void)model->forward(image).argmax(1).item<std::int64_t>();
    if (i >= 5)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

// Checkpoints (docs/checkpoints.md): after every epoch of a trial in a sweep, the model, the
// optimiser, the CPU generator (the data order and dropout come from it) and the accuracy so far,
// in CheckpointPath(epoch, ".pt"), written whole and then declared. A trial that goes on from one
// trains the epochs after it as an unbroken run would (on the CPU, exactly: the generator state
// is restored; on a GPU up to CUDA's own nondeterminism).
void SaveCheckpoint(Trial& trial, int epoch, ConvNet& model, torch::optim::Optimizer& optimizer, double accuracy) {
  torch::serialize::OutputArchive archive, model_part, optimizer_part;
  model->save(model_part);
  optimizer.save(optimizer_part);
  archive.write("model", model_part);
  archive.write("optimizer", optimizer_part);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("cpu_generator", generator.get_state());
  }
  archive.write("val_accuracy", torch::tensor(accuracy, torch::kFloat64));
  const std::string path = trial.CheckpointPath(epoch, ".pt");
  archive.save_to(path + ".tmp");
  if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot put the checkpoint in place");
  }
  trial.DeclareCheckpoint(epoch);
}

// Loads the checkpoint of `epoch` into the model and optimiser, which then uses the settings of
// `o`; returns its accuracy.
double LoadCheckpoint(Trial& trial, std::int64_t epoch, ConvNet& model, torch::optim::Optimizer& optimizer,
                      const TrainOptions& o, torch::Device device) {
  const std::string path = trial.CheckpointPath(epoch, ".pt");
  torch::serialize::InputArchive archive, model_part, optimizer_part;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": cannot load the checkpoint this trial goes on from (" +
                             std::string(e.what()).substr(0, std::string(e.what()).find('\n')) + ")");
  }
  archive.read("model", model_part);
  archive.read("optimizer", optimizer_part);
  model->load(model_part);
  optimizer.load(optimizer_part);
  // The optimiser's state carries the settings it had. The trial's own are the ones to use: a trial
  // that starts from another trial's checkpoint (population-based training) has explored them.
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    group.options().set_lr(o.lr);
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) {
      sgd->momentum(o.momentum).weight_decay(o.weight_decay);
    } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&group.options())) {
      adam->weight_decay(o.weight_decay);
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&group.options())) {
      adamw->weight_decay(o.weight_decay);
    }
  }
  torch::Tensor state, accuracy;
  archive.read("cpu_generator", state);
  archive.read("val_accuracy", accuracy);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  }
  return accuracy.item<double>();
}

}  // namespace

TrainResult Train(const TrainOptions& o, const Dataset& data, torch::Device device, Trial& trial) {
  const auto started = std::chrono::steady_clock::now();
  torch::manual_seed(o.seed);
  ConvNet model(o.blocks, o.channels, o.kernel_size, o.dropout);
  model->to(device);
  std::unique_ptr<torch::optim::Optimizer> optimizer = MakeOptimizer(o, model);
  TrainResult result;
  for (const torch::Tensor& p : model->parameters()) result.parameters += p.numel();
  const std::int64_t n = data.train.images.size(0);
  int first = 0;
  if (const std::optional<std::int64_t> resume = trial.ResumeStep()) {
    result.val_accuracy = LoadCheckpoint(trial, *resume, model, *optimizer, o, device);
    first = result.epochs = static_cast<int>(*resume);
    std::printf("going on from the checkpoint of epoch %d\n", first);
  }
  for (int epoch = first; epoch < o.epochs; ++epoch) {
    const auto epoch_started = std::chrono::steady_clock::now();
    model->train();
    const torch::Tensor order = torch::randperm(n, torch::kInt64);
    double loss_sum = 0;
    std::int64_t batches = 0;
    for (std::int64_t start = 0; start < n; start += o.batch_size) {
      const torch::Tensor index = order.slice(0, start, std::min(n, start + o.batch_size));
      const torch::Tensor x = data.train.images.index_select(0, index).to(device);
      const torch::Tensor y = data.train.labels.index_select(0, index).to(device);
      optimizer->zero_grad();
      const torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
      loss.backward();
      optimizer->step();
      loss_sum += loss.item<double>();
      ++batches;
      if (o.first_batch_only) {  // bench/: what it costs a trial to reach its first training step
        trial.Report(0, loss_sum);
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return result;
      }
    }
    result.val_accuracy = Accuracy(model, data.validation, device);
    std::printf("epoch %d/%d: train loss %.4f, validation accuracy %.4f\n", epoch + 1, o.epochs,
                loss_sum / static_cast<double>(std::max<std::int64_t>(1, batches)), result.val_accuracy);
    std::fflush(stdout);
    result.epochs = epoch + 1;
    trial.Report(result.epochs, result.val_accuracy);  // step = epochs done, the pruners' resource
    if (trial.InSweep() && !o.first_batch_only)
      SaveCheckpoint(trial, result.epochs, model, *optimizer, result.val_accuracy);
    // Stopped by the sweep (pruned, or paused at a rung: it goes on from the checkpoint if promoted);
    // after the last epoch there is nothing left to stop. The verdict on this epoch is on its way
    // through rank 0: waiting a little for it saves training an epoch that would be thrown away.
    const double epoch_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_started).count();
    const double wait = o.verdict_wait >= 0 ? o.verdict_wait : std::min(1.0, 0.02 * epoch_seconds);
    if (result.epochs < o.epochs && trial.ShouldPrune(std::chrono::milliseconds(std::llround(wait * 1000)))) {
      std::printf("pruned by the sweep after epoch %d\n", result.epochs);
      result.pruned = true;
      break;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (o.report_latency && !result.pruned) result.latency_ms = InferenceLatencyMs(model, data.validation, device);
  return result;
}

}  // namespace cleansweep::fashion
