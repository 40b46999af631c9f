#include "fashion/training.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

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
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
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
    if (trial.ShouldPrune()) {
      std::printf("pruned by the sweep after epoch %d\n", result.epochs);
      result.pruned = true;
      break;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace cleansweep::fashion
