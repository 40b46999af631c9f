#include "fashion/model.hpp"

namespace cleansweep::fashion {

ConvNetImpl::ConvNetImpl(int blocks, int channels, int kernel_size, double dropout) {
  namespace nn = torch::nn;
  nn::Sequential features_seq;
  int in = 1, side = 28;
  for (int b = 0; b < blocks; ++b) {
    const int out = channels << b;
    features_seq->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, kernel_size).padding(kernel_size / 2).bias(false)));
    features_seq->push_back(nn::BatchNorm2d(out));
    features_seq->push_back(nn::ReLU());
    features_seq->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
    in = out;
    side /= 2;
  }
  features = register_module("features", features_seq);
  classifier = register_module(
      "classifier", nn::Sequential(nn::Flatten(), nn::Dropout(dropout), nn::Linear(in * side * side, 128), nn::ReLU(),
                                   nn::Dropout(dropout), nn::Linear(128, 10)));
}

torch::Tensor ConvNetImpl::forward(torch::Tensor x) { return classifier->forward(features->forward(x)); }

}  // namespace cleansweep::fashion
