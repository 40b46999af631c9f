// The trial of bench/run_suggest_bench.sh in C++ (TRIAL=cpp): the same 40 parameters rank 0 draws
// and 40 its worker answers as the Python objective, each call timed from request to value. It
// starts in a millisecond where a Python interpreter takes a hundred, so on a machine with fewer
// cores than ranks it takes less of the CPU the round trips wait for.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <cleansweep/trial.hpp>

namespace {

template <typename F>
double TimedMs(F&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void Append(std::string* list, double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%s%.4f", list->empty() ? "[" : ", ", ms);
  *list += text;
}

}  // namespace

int main() {
  cleansweep::Trial trial = cleansweep::Trial::FromEnvironment();
  if (const char* settle = std::getenv("SETTLE_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(settle)));
  std::string undeclared, declared;
  for (int i = 0; i < 40; ++i) {
    const std::string u = "u" + std::to_string(i);
    Append(&undeclared, TimedMs([&] {
      if (i % 2) {
        trial.SuggestFloat(u, 0.0, 1.0);
      } else {
        trial.SuggestInt(u, 1, 64);
      }
    }));
    Append(&declared, TimedMs([&] { trial.SuggestFloat("d" + std::to_string(i), 0.0, 1.0); }));
  }
  trial.SetAttr("undeclared_ms", undeclared + "]");
  trial.SetAttr("declared_ms", declared + "]");
  trial.Finish(0.0);
  return 0;
}
