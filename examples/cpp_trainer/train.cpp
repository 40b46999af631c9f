// A complete trial program outside the cleansweep tree: logistic regression by minibatch SGD on a
// synthetic two-class problem, tuned by cleansweep (see sweep.yaml). It reads its
// hyperparameters from the sweep, reports validation accuracy after every epoch, stops when the
// sweep prunes it, and finishes with its best validation accuracy. Run alone, it uses defaults.
// TrainMain is the whole program: main.cpp makes it an executable, plugin.cpp a fork-server plugin.
#include "train.hpp"

#include <cleansweep/trial.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

namespace {

struct Example {
  std::vector<double> x;
  int label = 0;
};

// Two overlapping Gaussian clouds in `dims` dimensions; the same data for every trial.
std::vector<Example> MakeData(int n, int dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<Example> data(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Example& e = data[static_cast<size_t>(i)];
    e.label = i % 2;
    for (int d = 0; d < dims; ++d) {
      const double centre = (e.label ? 0.6 : -0.6) * (d < dims / 2 ? 1.0 : 0.2);
      e.x.push_back(centre + noise(rng));
    }
  }
  return data;
}

double Predict(const std::vector<double>& w, const std::vector<double>& x) {
  double z = w.back();  // bias
  for (size_t d = 0; d < x.size(); ++d) z += w[d] * x[d];
  return 1.0 / (1.0 + std::exp(-z));
}

double Accuracy(const std::vector<double>& w, const std::vector<Example>& data) {
  int right = 0;
  for (const Example& e : data) right += (Predict(w, e.x) >= 0.5) == (e.label == 1) ? 1 : 0;
  return static_cast<double>(right) / static_cast<double>(data.size());
}

}  // namespace

int TrainMain(int, char**) {
  cleansweep::Trial trial = cleansweep::Trial::FromEnvironment();
  const double lr = trial.GetDouble("lr", 0.05);
  const double l2 = trial.GetDouble("l2", 1e-4);
  const auto batch = static_cast<size_t>(trial.GetInt("batch_size", 32));
  const std::int64_t epochs = trial.GetInt("epochs", 10);
  if (lr <= 0 || batch == 0 || epochs < 1) {
    std::fprintf(stderr, "logreg-trainer: need lr > 0, batch_size >= 1, epochs >= 1\n");
    return 2;
  }
  const int dims = 20;
  const std::vector<Example> train = MakeData(2000, dims, 1), val = MakeData(1000, dims, 2);
  std::vector<double> w(dims + 1, 0.0);
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 shuffle(static_cast<unsigned>(trial.number() + 1));
  double best = 0;
  for (std::int64_t epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t start = 0; start < order.size(); start += batch) {
      std::vector<double> grad(w.size(), 0.0);
      const size_t end = std::min(order.size(), start + batch);
      for (size_t i = start; i < end; ++i) {
        const Example& e = train[order[i]];
        const double error = Predict(w, e.x) - e.label;
        for (size_t d = 0; d < e.x.size(); ++d) grad[d] += error * e.x[d];
        grad.back() += error;
      }
      for (size_t d = 0; d < w.size(); ++d) {
        w[d] -= lr * (grad[d] / static_cast<double>(end - start) + (d + 1 < w.size() ? l2 * w[d] : 0.0));
      }
    }
    const double accuracy = Accuracy(w, val);
    best = std::max(best, accuracy);
    trial.Report(epoch, accuracy);
    if (trial.ShouldPrune()) return 0;  // the sweep has recorded this trial as PRUNED
  }
  trial.SetAttr("final_accuracy", Accuracy(w, val));
  trial.Finish(best);
  return 0;
}
