// Fashion-MNIST from the IDX files of Debian's dataset-fashion-mnist package, read through zlib
// straight from the .gz files, or from memory a fork server's prepare hook filled (Preload).
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
  bool preloaded = false;  // decoded from what Preload read, not from the files
};

// Reads train-images/labels from `dir`, holds the last `val_size` examples out for validation and
// keeps the first `subset` of the rest for training (all of it when subset is 0). Throws
// std::runtime_error naming the file on a missing or malformed file.
Dataset Load(const std::string& dir, int subset, int val_size);

// Reads one IDX file (gzip or plain) into a uint8 tensor shaped by its header.
torch::Tensor ReadIdx(const std::string& path);

// Reads and decompresses the training files of `dir` into this process's memory once, for Load to
// use instead of the files. Made for the fork server's prepare hook: every trial forked after it
// shares those pages copy-on-write (Load only reads them) instead of decoding 47 MB again. Plain
// zlib into plain memory: no libtorch thread pool starts and no CUDA, so forking afterwards is
// safe. Throws as Load does.
void Preload(const std::string& dir);
// The folder Preload read in this process (or one of its forked ancestors), or "".
const std::string& PreloadedDir();

}  // namespace cleansweep::fashion
