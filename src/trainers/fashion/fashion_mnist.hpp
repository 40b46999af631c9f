// Fashion-MNIST from the IDX files of Debian's dataset-fashion-mnist package, read through zlib
// straight from the .gz files.
#pragma once

#include <string>

#include <torch/types.h>

namespace cleansweep::fashion {

inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

struct Split {
  torch::Tensor images;  // float32 [N, 1, 28, 28], normalised
  torch::Tensor labels;  // int64 [N]
};

struct Dataset {
  Split train;
  Split validation;
};

// Reads train-images/labels from `dir`, holds the last `val_size` examples out for validation and
// keeps the first `subset` of the rest for training (all of it when subset is 0). Throws
// std::runtime_error naming the file on a missing or malformed file.
Dataset Load(const std::string& dir, int subset, int val_size);

// Reads one IDX file (gzip or plain) into a uint8 tensor shaped by its header.
torch::Tensor ReadIdx(const std::string& path);

}  // namespace cleansweep::fashion
