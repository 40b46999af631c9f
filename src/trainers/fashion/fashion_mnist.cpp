#include "fashion/fashion_mnist.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include <torch/torch.h>

namespace cleansweep::fashion {
namespace {

// Mean and standard deviation of the Fashion-MNIST training images, scaled to [0, 1].
constexpr double kMean = 0.2860;
constexpr double kStd = 0.3530;

std::uint32_t BigEndian(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

void ReadExactly(gzFile file, void* buffer, size_t size, const std::string& path) {
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
    const int n = gzread(file, out, chunk);
    if (n <= 0) throw std::runtime_error(path + ": truncated IDX file");
    out += n;
    size -= static_cast<size_t>(n);
  }
}

// One IDX file's contents: its shape and its bytes.
struct Idx {
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> bytes;
};

Idx ReadIdxBytes(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) {
    throw std::runtime_error(path + ": cannot open (install the dataset with: apt-get install dataset-fashion-mnist)");
  }
  unsigned char header[4];
  ReadExactly(file.get(), header, 4, path);
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08) {
    throw std::runtime_error(path + ": not an IDX file of unsigned bytes");
  }
  const int rank = header[3];
  if (rank < 1 || rank > 4) throw std::runtime_error(path + ": unexpected IDX rank");
  Idx idx;
  std::int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    unsigned char d[4];
    ReadExactly(file.get(), d, 4, path);
    idx.dims.push_back(BigEndian(d));
    count *= idx.dims.back();
  }
  idx.bytes.resize(static_cast<size_t>(count));
  ReadExactly(file.get(), idx.bytes.data(), idx.bytes.size(), path);
  return idx;
}

// What Preload read: kept for the life of the process, and of every process forked from it.
struct Preloaded {
  std::string dir;
  Idx images;
  Idx labels;
};
Preloaded& Cache() {
  static Preloaded cache;
  return cache;
}

// A read-only view of preloaded bytes as a tensor: no copy (the pages stay shared with the fork
// server until something writes them, and nothing does).
torch::Tensor View(Idx& idx) { return torch::from_blob(idx.bytes.data(), idx.dims, torch::kUInt8); }

}  // namespace

torch::Tensor ReadIdx(const std::string& path) {
  Idx idx = ReadIdxBytes(path);
  torch::Tensor data = torch::empty(idx.dims, torch::kUInt8);
  std::copy(idx.bytes.begin(), idx.bytes.end(), data.data_ptr<std::uint8_t>());
  return data;
}

void Preload(const std::string& dir) {
  Preloaded loaded;
  loaded.images = ReadIdxBytes(dir + "/train-images-idx3-ubyte.gz");
  loaded.labels = ReadIdxBytes(dir + "/train-labels-idx1-ubyte.gz");
  loaded.dir = dir;
  Cache() = std::move(loaded);
}

const std::string& PreloadedDir() { return Cache().dir; }

Dataset Load(const std::string& dir, int subset, int val_size) {
  const bool preloaded = !Cache().dir.empty() && Cache().dir == dir;
  const torch::Tensor images = preloaded ? View(Cache().images) : ReadIdx(dir + "/train-images-idx3-ubyte.gz");
  const torch::Tensor labels = preloaded ? View(Cache().labels) : ReadIdx(dir + "/train-labels-idx1-ubyte.gz");
  const std::int64_t n = images.size(0);
  if (labels.size(0) != n) throw std::runtime_error(dir + ": image and label counts differ");
  if (val_size < 1 || val_size >= n)
    throw std::runtime_error("--val-size must be between 1 and " + std::to_string(n - 1));
  const std::int64_t train_n = subset > 0 ? std::min<std::int64_t>(subset, n - val_size) : n - val_size;
  const auto normalise = [](const torch::Tensor& raw) {
    return ((raw.to(torch::kFloat32) / 255.0 - kMean) / kStd).unsqueeze(1).contiguous();
  };
  Dataset data;
  data.preloaded = preloaded;
  data.train = {normalise(images.slice(0, 0, train_n)), labels.slice(0, 0, train_n).to(torch::kInt64)};
  data.validation = {normalise(images.slice(0, n - val_size, n)), labels.slice(0, n - val_size, n).to(torch::kInt64)};
  return data;
}

}  // namespace cleansweep::fashion
