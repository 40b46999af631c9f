// A fuzzing driver for builds without libFuzzer (g++): it runs LLVMFuzzerTestOneInput on every
// file of the corpus folders, then on random mutations of them until the time is up. Not
// coverage-guided (clang's -fsanitize=fuzzer is, with the same targets: tests/fuzz/README.md),
// but with the sanitizers it finds what a bounded CI run can: crashes, overflows, hangs.
//
//   TARGET [--seconds N] [--seed S] [--crash-dir DIR] CORPUS_DIR_OR_FILE...
//
// An input that crashes (or runs past 25 s) is written to DIR/crash-<target>-<hash> before the
// process dies, to be kept as a regression case in tests/fuzz/regressions/.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size);
// Present when a sanitizer runtime is linked (it then dies without a signal): weak, so the driver
// links without one too.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

using Bytes = std::vector<std::uint8_t>;

// The input being run, for the crash handlers (they may only call async-signal-safe functions).
const Bytes* g_current = nullptr;
char g_crash_path[4096];
// The driver's own process: a child the target forks (the guarded study reader's) inherits the
// handlers, and its crash is the target's to handle, not a finding.
pid_t g_driver_pid = 0;

void SaveCurrentInput() {
  if (!g_current || ::getpid() != g_driver_pid) return;
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  const char* p = reinterpret_cast<const char*>(g_current->data());
  for (size_t left = g_current->size(); left > 0;) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::close(fd);
  const char note[] = "\nfuzz: the crashing input is in ";
  (void)!::write(STDERR_FILENO, note, sizeof note - 1);
  (void)!::write(STDERR_FILENO, g_crash_path, std::strlen(g_crash_path));
  (void)!::write(STDERR_FILENO, "\n", 1);
}

void OnFatalSignal(int sig) {
  SaveCurrentInput();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

Bytes ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Pieces that open and close structure in the formats we parse (JSON, YAML, HDF5's text).
const std::vector<std::string> kTokens = {"{",           "}",
                                          "[",           "]",
                                          "\"",          "\\",
                                          "\n",          ":",
                                          ",",           "- ",
                                          "&a ",         "*a",
                                          "!!str ",      "0",
                                          "-1",          "1e309",
                                          "nan",         "9223372036854775808",
                                          "\xff",        "\xc3",
                                          "\xe2\x82",    std::string(1, '\0'),
                                          "{\"attrs\":", "{\"value\":",
                                          "{\"step\":"};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  Bytes Mutate(Bytes input, const std::vector<Bytes>& corpus) {
    const int rounds = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < rounds; ++i) Once(&input, corpus);
    if (input.size() > kMaxSize) input.resize(kMaxSize);
    return input;
  }

 private:
  static constexpr size_t kMaxSize = 1 << 20;

  size_t Below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void Once(Bytes* b, const std::vector<Bytes>& corpus) {
    const size_t at = Below(b->size() + 1);
    switch (Below(9)) {
      case 0:  // flip a bit
        if (!b->empty()) (*b)[Below(b->size())] ^= static_cast<std::uint8_t>(1u << Below(8));
        break;
      case 1:  // a random byte
        if (!b->empty()) (*b)[Below(b->size())] = static_cast<std::uint8_t>(Below(256));
        break;
      case 2: {  // insert random bytes
        Bytes extra(1 + Below(16));
        for (auto& x : extra) x = static_cast<std::uint8_t>(Below(256));
        b->insert(b->begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
        break;
      }
      case 3:  // delete a range
        if (at < b->size()) {
          b->erase(b->begin() + static_cast<std::ptrdiff_t>(at),
                   b->begin() + static_cast<std::ptrdiff_t>(std::min(b->size(), at + 1 + Below(64))));
        }
        break;
      case 4: {  // a token, sometimes many times over (deep nesting, long runs)
        const std::string& token = kTokens[Below(kTokens.size())];
        const size_t times = Below(4) == 0 ? 1 + Below(100000) : 1;
        std::string text;
        for (size_t i = 0; i < times && text.size() < kMaxSize / 2; ++i) text += token;
        b->insert(b->begin() + static_cast<std::ptrdiff_t>(at), text.begin(), text.end());
        break;
      }
      case 5:  // duplicate a range
        if (at < b->size()) {
          const Bytes piece(b->begin() + static_cast<std::ptrdiff_t>(at),
                            b->begin() + static_cast<std::ptrdiff_t>(std::min(b->size(), at + 1 + Below(256))));
          b->insert(b->begin() + static_cast<std::ptrdiff_t>(Below(b->size() + 1)), piece.begin(), piece.end());
        }
        break;
      case 6: {  // splice in part of another input
        const Bytes& other = corpus[Below(corpus.size())];
        if (other.empty()) break;
        const size_t from = Below(other.size());
        b->insert(b->begin() + static_cast<std::ptrdiff_t>(at), other.begin() + static_cast<std::ptrdiff_t>(from),
                  other.begin() + static_cast<std::ptrdiff_t>(std::min(other.size(), from + 1 + Below(512))));
        break;
      }
      case 7: {  // wrap a range in brackets, up to 100,000 deep: valid nesting, not just open brackets
        const size_t end = at + Below(b->size() - at + 1);
        const size_t depth = 1 + (Below(2) ? Below(100) : Below(100000));
        const bool square = Below(2) != 0;
        const std::string open = square ? "[" : "{\"a\":", close = square ? "]" : "}";
        std::string before, after;
        for (size_t i = 0; i < depth; ++i) before += open, after += close;
        b->insert(b->begin() + static_cast<std::ptrdiff_t>(end), after.begin(), after.end());
        b->insert(b->begin() + static_cast<std::ptrdiff_t>(at), before.begin(), before.end());
        break;
      }
      default:  // cut it short
        if (!b->empty()) b->resize(Below(b->size()));
        break;
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  std::uint64_t seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::string crash_dir = ".";
  std::vector<Bytes> corpus;
  const std::string target = std::filesystem::path(argv[0]).filename().string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--crash-dir" && i + 1 < argc) {
      crash_dir = argv[++i];
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) corpus.push_back(ReadFile(entry.path()));
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      corpus.push_back(ReadFile(arg));
    } else {
      std::fprintf(stderr, "%s: no such corpus folder or file: %s\n", target.c_str(), arg.c_str());
      return 2;
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  g_driver_pid = ::getpid();
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/crash-%s-%llu", crash_dir.c_str(), target.c_str(),
                static_cast<unsigned long long>(seed));
  // An alternate stack: a stack overflow (deep recursion, the classic parser crash) must still
  // reach the handler that saves the input.
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  ::sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM}) {
    struct sigaction action {};
    action.sa_handler = OnFatalSignal;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(SaveCurrentInput);
  const auto run = [](const Bytes& input) {
    g_current = &input;
    ::alarm(25);  // a hang is a bug too: SIGALRM saves the input and ends the run
    LLVMFuzzerTestOneInput(input.data(), input.size());
    ::alarm(0);
    g_current = nullptr;
  };
  for (const Bytes& input : corpus) run(input);  // the seeds and every regression case, first
  Mutator mutator(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long runs = 0;
  std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ULL);
  while (std::chrono::steady_clock::now() < deadline) {
    const Bytes input = mutator.Mutate(corpus[pick() % corpus.size()], corpus);
    run(input);
    ++runs;
  }
  std::printf("fuzz %s: %zu corpus inputs, then %ld mutated inputs in %.0f s (seed %llu): no crash\n", target.c_str(),
              corpus.size(), runs, seconds, static_cast<unsigned long long>(seed));
  return 0;
}
