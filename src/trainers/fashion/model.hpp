// The CNN the trainer tunes: `blocks` x (conv -> batch norm -> ReLU -> 2x2 max pool), channels
// doubling per block, then dropout -> linear(128) -> ReLU -> dropout -> linear(10).
#pragma once

#include <torch/nn.h>

namespace cleansweep::fashion {

struct ConvNetImpl : torch::nn::Module {
  ConvNetImpl(int blocks, int channels, int kernel_size, double dropout);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(ConvNet);

}  // namespace cleansweep::fashion
