// cleansweep/trial.hpp: the client side of the trial protocol for C++ programs (header-only, no
// dependencies). docs/trial-protocol.md describes the protocol itself.
//
//   #include <cleansweep/trial.hpp>
//
//   double TrainOneEpoch(double lr);  // yours
//
//   int main() {
//     cleansweep::Trial trial = cleansweep::Trial::FromEnvironment();
//     const double lr = trial.GetDouble("lr", 1e-3);  // the default applies outside a sweep
//     double accuracy = 0;
//     for (int epoch = 0; epoch < 10; ++epoch) {
//       accuracy = TrainOneEpoch(lr);
//       trial.Report(epoch, accuracy);                // an intermediate value
//       if (trial.ShouldPrune()) return 0;            // the sweep pruned this trial
//     }
//     trial.SetAttr("n_params", 123456.0);
//     trial.Finish(accuracy);                         // the objective
//   }
//
// (tests/CMakeLists.txt compiles and runs this example: the `header_example` test.)
//
// Outside a sweep (no CLEANSWEEP_REPORT_FD) every call still works: getters return their
// defaults and reports are printed to stderr, so the same program runs standalone.
//
// The same code can also be a plugin for `trial.launcher: forkserver` (docs/fork-server.md): build
// it as a shared library too, with one line naming the function that main() would be:
//
//   int TrainMain(int argc, char** argv) { ... as above ... }
//   CLEANSWEEP_TRIAL_PLUGIN(TrainMain)             // in the plugin's sources only
//   int main(int argc, char** argv) { return TrainMain(argc, argv); }   // in the executable's
//
// The fork server loads the plugin once and forks a fresh process for every trial, which runs
// TrainMain with the trial's argv, environment and pipes, then exits with its return value. An
// optional hook runs once in the server after loading, before any trial (load read-only data that
// every trial shares through copy-on-write, say); a nonzero return refuses to start:
//
//   CLEANSWEEP_TRIAL_PREPARE(LoadDataset)          // int LoadDataset()
//
// Neither may initialise CUDA (the server refuses a plugin that did) nor should start threads (a
// forked trial gets none of them; the server warns).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define CLEANSWEEP_TRIAL_PLUGIN(main_function)                                                         \
  extern "C" __attribute__((visibility("default"))) const int cleansweep_trial_plugin_version = 1;     \
  extern "C" __attribute__((visibility("default"))) int cleansweep_trial_main(int argc, char** argv) { \
    return main_function(argc, argv);                                                                  \
  }
#define CLEANSWEEP_TRIAL_PREPARE(prepare_function) \
  extern "C" __attribute__((visibility("default"))) int cleansweep_trial_prepare() { return prepare_function(); }

namespace cleansweep {

// Exit status a trial uses after reporting an out-of-memory failure (ReportOutOfMemory).
inline constexpr int kExitOutOfMemory = 75;

class Trial {
 public:
  // Reads CLEANSWEEP_PARAMS, CLEANSWEEP_TRIAL, CLEANSWEEP_TRIAL_DIR and CLEANSWEEP_REPORT_FD.
  // Throws std::runtime_error when CLEANSWEEP_PARAMS is not a flat JSON object.
  static Trial FromEnvironment() {
    Trial trial;
    if (const char* params = std::getenv("CLEANSWEEP_PARAMS")) trial.params_ = ParseFlatObject(params);
    if (const char* number = std::getenv("CLEANSWEEP_TRIAL")) trial.number_ = std::atoll(number);
    if (const char* dir = std::getenv("CLEANSWEEP_TRIAL_DIR")) trial.dir_ = dir;
    if (const char* fd = std::getenv("CLEANSWEEP_REPORT_FD")) {
      trial.fd_ = InheritedPipe(std::atoi(fd), O_WRONLY);
      if (trial.fd_ < 0) {
        throw std::runtime_error(std::string("CLEANSWEEP_REPORT_FD ") + fd +
                                 " is open neither here nor in a process of this trial above");
      }
    }
    // Without its control pipe the trial only misses prune notices; it is stopped by signals then.
    if (const char* fd = std::getenv("CLEANSWEEP_CONTROL_FD")) {
      trial.control_fd_ = InheritedPipe(std::atoi(fd), O_RDONLY | O_NONBLOCK);
    }
    if (const char* pruning = std::getenv("CLEANSWEEP_PRUNING")) trial.pruning_ = std::string(pruning) != "0";
    if (const char* dir = std::getenv("CLEANSWEEP_CHECKPOINT_DIR")) trial.checkpoint_dir_ = dir;
    if (const char* step = std::getenv("CLEANSWEEP_RESUME_STEP"); step && *step) trial.resume_step_ = std::atoll(step);
    return trial;
  }

  // True once the sweep has pruned this trial: stop and exit normally; it is recorded PRUNED with
  // its last reported value. Always false outside a sweep. Call it after Report() (and after the
  // step's checkpoint). By default it never blocks. With `wait`, it waits up to that long for a
  // notice and returns as soon as one arrives: the sweep's verdict on the step just reported takes
  // a round trip through rank 0, so a trial that looks at once trains one more step before it sees
  // a prune (or a pause at a rung, docs/pruners.md). A wait longer than that round trip (well under
  // a second on an idle machine) stops it at the step it was judged at; it costs the whole wait on
  // every step the sweep lets go on, so keep it small against a step's time. In a sweep without a
  // pruner (CLEANSWEEP_PRUNING=0) no notice comes, and it never waits.
  bool ShouldPrune(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    if (pruned_ || control_fd_ < 0) return pruned_;
    const auto deadline = std::chrono::steady_clock::now() + (pruning_ ? wait : std::chrono::milliseconds(0));
    std::string line;
    while (!pruned_ && ControlLine(deadline, &line)) {
    }
    return pruned_;
  }

  // Define-by-run (docs/trial-protocol.md, "Asking for a parameter"): the trial asks for each
  // parameter as it runs, as an Optuna objective does. A parameter the config declares gets its
  // value; one it does not declare is drawn by the sweep's sampler at that moment and recorded.
  // Asked again with the same arguments, the same value (no round trip). Throws
  // std::runtime_error when the sweep refuses (the trial then fails with that reason). Outside a
  // sweep: a value given in CLEANSWEEP_PARAMS, else the middle of the range (the first choice).
  double SuggestFloat(const std::string& name, double low, double high, std::optional<double> step = std::nullopt,
                      bool log = false) {
    std::string request = "\"type\": \"float\", \"low\": " + Number(low) + ", \"high\": " + Number(high) +
                          ", \"log\": " + (log ? "true" : "false");
    if (step) request += ", \"step\": " + Number(*step);
    const std::string value = Suggest(name, request, [&] {
      double middle = log ? std::sqrt(low * high) : (low + high) / 2;
      if (step) middle = low + std::round((middle - low) / *step) * *step;
      return Number(middle);
    });
    return std::strtod(value.c_str(), nullptr);
  }
  std::int64_t SuggestInt(const std::string& name, std::int64_t low, std::int64_t high, std::int64_t step = 1,
                          bool log = false) {
    const std::string request = "\"type\": \"int\", \"low\": " + std::to_string(low) +
                                ", \"high\": " + std::to_string(high) + ", \"step\": " + std::to_string(step) +
                                ", \"log\": " + (log ? "true" : "false");
    const std::string value = Suggest(name, request, [&] {
      const double middle = log ? std::sqrt(static_cast<double>(low) * static_cast<double>(high))
                                : (static_cast<double>(low) + static_cast<double>(high)) / 2;
      return std::to_string(low + static_cast<std::int64_t>(
                                      std::llround((middle - static_cast<double>(low)) / static_cast<double>(step))) *
                                      step);
    });
    return std::strtoll(value.c_str(), nullptr, 10);
  }
  // Text choices; the value is one of them.
  std::string SuggestCategorical(const std::string& name, const std::vector<std::string>& choices) {
    std::string list;
    for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + Quote(c);
    const std::string value = Suggest(name, "\"type\": \"categorical\", \"choices\": [" + list + "]",
                                      [&] { return choices.empty() ? std::string() : choices.front(); });
    return value;
  }
  // Number choices; the value is one of them.
  double SuggestCategorical(const std::string& name, const std::vector<double>& choices) {
    std::string list;
    for (const double c : choices) list += (list.empty() ? "" : ", ") + Number(c);
    const std::string value = Suggest(name, "\"type\": \"categorical\", \"choices\": [" + list + "]",
                                      [&] { return choices.empty() ? std::string("0") : Number(choices.front()); });
    return std::strtod(value.c_str(), nullptr);
  }
  // Ends the trial PRUNED at its last reported value, by its own decision (Optuna's
  // `raise TrialPruned`); then return from main with 0.
  void Prune(const std::string& reason = "") { Send("{\"pruned\": " + Quote(reason) + "}"); }

  bool InSweep() const { return fd_ >= 0; }
  std::int64_t number() const { return number_; }  // -1 outside a sweep
  const std::string& dir() const { return dir_; }  // folder for artifacts; "" outside a sweep

  bool Has(const std::string& name) const { return params_.count(name) != 0; }
  // The raw JSON text of every parameter, by name (strings without their quotes).
  const std::map<std::string, std::string>& params() const { return params_; }

  // Typed getters; throw std::runtime_error when the parameter exists but has another type.
  double GetDouble(const std::string& name, double fallback) const {
    const auto it = params_.find(name);
    if (it == params_.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') throw std::runtime_error("parameter " + name + " is not a number");
    return v;
  }
  std::int64_t GetInt(const std::string& name, std::int64_t fallback) const {
    if (!Has(name)) return fallback;
    const double v = GetDouble(name, 0);
    if (v != std::floor(v)) throw std::runtime_error("parameter " + name + " is not a whole number");
    return static_cast<std::int64_t>(v);
  }
  std::string GetString(const std::string& name, const std::string& fallback) const {
    const auto it = params_.find(name);
    return it == params_.end() ? fallback : it->second;
  }
  bool GetBool(const std::string& name, bool fallback) const {
    const auto it = params_.find(name);
    if (it == params_.end()) return fallback;
    if (it->second == "true") return true;
    if (it->second == "false") return false;
    throw std::runtime_error("parameter " + name + " is not a boolean");
  }

  // Checkpoints (docs/checkpoints.md). A trial that was cut off after declaring a checkpoint runs
  // again under its number with ResumeStep() set: load the checkpoint of that step and go on with
  // the next. Write each checkpoint whole under a temporary name, rename it to CheckpointPath(step,
  // suffix), then DeclareCheckpoint(step):
  //
  //   if (const auto step = trial.ResumeStep()) { Load(trial.CheckpointPath(*step, ".pt")); first = *step + 1; }
  //   for (int epoch = first; epoch <= epochs; ++epoch) {
  //     ... train, trial.Report(epoch, accuracy) ...
  //     const std::string path = trial.CheckpointPath(epoch, ".pt");
  //     Save(path + ".tmp");
  //     std::rename((path + ".tmp").c_str(), path.c_str());
  //     trial.DeclareCheckpoint(epoch);
  //   }
  //
  // The trial's checkpoint folder (created on first use); "" outside a sweep.
  const std::string& CheckpointDir() {
    if (!checkpoint_dir_.empty() && !checkpoint_dir_made_) {
      ::mkdir(checkpoint_dir_.c_str(), 0755);  // exists already after the first attempt
      checkpoint_dir_made_ = true;
    }
    return checkpoint_dir_;
  }
  // Where the checkpoint of `step` goes: CheckpointDir()/step-<step><suffix> (in the current folder
  // outside a sweep). trial.checkpoint_keep removes older ones by this name.
  std::string CheckpointPath(std::int64_t step, const std::string& suffix = "") {
    const std::string name = "step-" + std::to_string(step) + suffix;
    return CheckpointDir().empty() ? name : checkpoint_dir_ + "/" + name;
  }
  // The step whose checkpoint this attempt starts from; none for a trial that starts afresh.
  std::optional<std::int64_t> ResumeStep() const { return resume_step_; }
  // Tells the sweep the checkpoint of `step` is written: a trial cut off from now on goes on from it.
  void DeclareCheckpoint(std::int64_t step) { Send("{\"checkpoint\": " + std::to_string(step) + "}"); }

  // An intermediate value of the objective at `step` (an epoch, say).
  void Report(std::int64_t step, double value) {
    Send("{\"step\": " + std::to_string(step) + ", \"value\": " + Number(value) + "}");
  }
  // A user attribute stored with the trial.
  void SetAttr(const std::string& name, double value) {
    Send("{\"attrs\": {" + Quote(name) + ": " + Number(value) + "}}");
  }
  void SetAttr(const std::string& name, const std::string& value) {
    Send("{\"attrs\": {" + Quote(name) + ": " + Quote(value) + "}}");
  }
  // The final objective. Call once, then exit 0.
  void Finish(double value) { Send("{\"value\": " + Number(value) + "}"); }
  // A study of several metrics (study.metrics): every metric the trial reports, by name, once:
  //   trial.Finish({{"val_accuracy", 0.91}, {"latency_ms", 12.5}});
  void Finish(const std::map<std::string, double>& values) { Send("{\"values\": " + Object(values) + "}"); }
  // Intermediate values of several metrics at `step`; the first metric must be among them.
  void Report(std::int64_t step, const std::map<std::string, double>& values) {
    Send("{\"step\": " + std::to_string(step) + ", \"values\": " + Object(values) + "}");
  }
  // Tells the sweep this trial ran out of memory ("gpu" or "host"); then exit(kExitOutOfMemory).
  void ReportOutOfMemory(const std::string& kind, const std::string& message) {
    Send("{\"oom\": " + Quote(kind) + ", \"message\": " + Quote(message) + "}");
  }

 private:
  // One request on the report pipe, its answer from the control pipe: the value as JSON text
  // (strings without their quotes). `standalone`: the value outside a sweep.
  template <class Standalone>
  std::string Suggest(const std::string& name, const std::string& fields, const Standalone& standalone) {
    const std::string request = "{\"suggest\": {\"name\": " + Quote(name) + ", " + fields + "}}";
    if (const auto known = asked_.find(name); known != asked_.end() && known->second.first == request) {
      return known->second.second;
    }
    std::string value;
    if (fd_ < 0) {
      const auto given = params_.find(name);
      value = given != params_.end() ? given->second : standalone();
    } else {
      if (control_fd_ < 0) throw std::runtime_error("suggest " + name + ": no control pipe (CLEANSWEEP_CONTROL_FD)");
      Send(request);
      std::string line;
      const auto forever = std::chrono::steady_clock::time_point::max();
      for (;;) {
        if (!ControlLine(forever, &line)) {
          throw std::runtime_error("suggest " + name + ": the sweep closed the control pipe before answering");
        }
        if (line.empty() || line[0] != '{' || line.find("\"name\":" + Quote(name)) == std::string::npos) continue;
        if (const size_t error = line.find("\"error\":"); error != std::string::npos) {
          size_t at = error + 8;
          throw std::runtime_error("suggest " + name + ": " + ReadString(line, &at).value_or(line));
        }
        const size_t at = line.find("\"value\":");
        if (at == std::string::npos) continue;
        size_t start = at + 8;
        value =
            line[start] == '"' ? ReadString(line, &start).value_or("") : line.substr(start, line.rfind('}') - start);
        break;
      }
    }
    asked_[name] = {request, value};
    params_[name] = value;
    return value;
  }

  // The JSON string that starts at text[at] (a quote), unescaped.
  // The JSON string whose opening quote is text[*at], unescaped; *at moves past its closing quote.
  // None when it does not end. (The worker writes UTF-8 as is: \\uXXXX stands for one byte here.)
  static std::optional<std::string> ReadString(const std::string& text, size_t* at) {
    std::string out;
    size_t i = *at + 1;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        const char e = text[++i];
        if (e == 'u' && i + 4 < text.size()) {
          out += static_cast<char>(std::strtol(text.substr(i + 1, 4).c_str(), nullptr, 16));
          i += 4;
        } else {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
        }
      } else {
        out += text[i];
      }
    }
    if (i >= text.size()) return std::nullopt;
    *at = i + 1;
    return out;
  }

  // The next line of the control pipe (a prune notice is noted), waiting until `deadline`;
  // false when none came by then or the pipe is closed.
  bool ControlLine(std::chrono::steady_clock::time_point deadline, std::string* line) {
    for (;;) {
      if (const size_t end = control_buffer_.find('\n'); end != std::string::npos) {
        *line = control_buffer_.substr(0, end);
        control_buffer_.erase(0, end + 1);
        if (*line == "prune") pruned_ = true;
        return true;
      }
      int timeout = -1;
      if (deadline != std::chrono::steady_clock::time_point::max()) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        timeout = static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 1 << 30));
      }
      pollfd p{control_fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0 || !(p.revents & (POLLIN | POLLHUP))) return false;  // nothing within the wait
      char buf[4096];
      const ssize_t n = ::read(control_fd_, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return false;  // the sweep closed the pipe
      control_buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  void Send(const std::string& line) {
    const std::string text = line + "\n";
    if (fd_ < 0) {
      std::fprintf(stderr, "cleansweep report: %s", text.c_str());
      return;
    }
    const char* data = text.data();
    size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the worker is gone; nothing useful left to do
      data += n;
      left -= static_cast<size_t>(n);
    }
  }

  // The pipe the worker passed as `fd`. A launcher between the worker and this process may have
  // closed it (torchrun starts its processes with every inherited descriptor closed) and the
  // number may since name another file (even the other pipe, opened again here): then the same
  // pipe is opened again (`flags`) through the nearest process above this one that belongs to
  // the same trial and attempt and holds it there (docs/multi-gpu.md). Failing that, `fd` itself
  // if it is open the right way (a file given by hand); else -1.
  static int InheritedPipe(int fd, int flags) {
    struct stat st {};
    if (fd < 0) return -1;
    // A pipe open the way the worker passed it (its write end for reports, read end for control).
    const int mode = ::fcntl(fd, F_GETFL);
    const bool right_way = ::fstat(fd, &st) == 0 && mode >= 0 && (mode & O_ACCMODE) == (flags & O_ACCMODE);
    if (right_way && S_ISFIFO(st.st_mode)) return fd;
    std::string ours[3];  // "NAME=value" of those set here
    const char* names[3] = {"CLEANSWEEP_TRIAL", "CLEANSWEEP_ATTEMPT", "CLEANSWEEP_REPORT_FD"};
    for (int i = 0; i < 3; ++i) {
      if (const char* value = std::getenv(names[i])) ours[i] = std::string(names[i]) + "=" + value;
    }
    for (long pid = static_cast<long>(::getppid()); pid > 1;) {
      const std::string proc = "/proc/" + std::to_string(pid);
      const std::string environ = ReadWhole(proc + "/environ");
      bool same_trial = true;
      for (const std::string& entry : ours) {
        same_trial = same_trial && (entry.empty() || (environ.compare(0, entry.size() + 1, entry + '\0') == 0 ||
                                                      environ.find('\0' + entry + '\0') != std::string::npos));
      }
      const std::string path = proc + "/fd/" + std::to_string(fd);
      if (same_trial && ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
        const int opened = ::open(path.c_str(), flags | O_CLOEXEC);
        if (opened >= 0) return opened;
      }
      // The parent: the field after the name, which ends at the last ')'.
      const std::string stat = ReadWhole(proc + "/stat");
      const size_t name_end = stat.rfind(')');
      if (name_end == std::string::npos) break;
      char state = 0;
      long parent = 0;
      if (std::sscanf(stat.c_str() + name_end + 1, " %c %ld", &state, &parent) != 2) break;
      pid = parent;
    }
    // No process of the trial above holds it: a file given by hand (`3>reports.jsonl`, to run a
    // trial outside a sweep) is used as it is.
    return right_way ? fd : -1;
  }

  static std::string ReadWhole(const std::string& path) {
    std::string text;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      std::fclose(f);
    }
    return text;
  }

  static std::string Number(double v) {
    if (!std::isfinite(v)) return "null";  // the worker records a non-finite objective as a failure
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);  // the shortest form that reads back exactly
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }

  static std::string Object(const std::map<std::string, double>& values) {
    std::string out = "{";
    for (const auto& [name, v] : values) out += (out.size() > 1 ? ", " : "") + Quote(name) + ": " + Number(v);
    return out + "}";
  }

  static std::string Quote(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
    return out + "\"";
  }

  // Parses {"name": scalar, ...} as the worker writes it: strings, numbers, true/false.
  static std::map<std::string, std::string> ParseFlatObject(const std::string& text) {
    std::map<std::string, std::string> out;
    size_t i = 0;
    const auto fail = [&]() { throw std::runtime_error("CLEANSWEEP_PARAMS is not a flat JSON object: " + text); };
    const auto skip = [&]() {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    const auto string = [&]() {
      if (text[i] != '"') fail();
      std::optional<std::string> s = ReadString(text, &i);
      if (!s) fail();
      return *s;
    };
    skip();
    if (i >= text.size() || text[i++] != '{') fail();
    skip();
    if (i < text.size() && text[i] == '}') return out;
    while (i < text.size()) {
      skip();
      const std::string key = string();
      skip();
      if (i >= text.size() || text[i++] != ':') fail();
      skip();
      if (i >= text.size()) fail();
      if (text[i] == '"') {
        out[key] = string();
      } else {
        const size_t end = text.find_first_of(",}", i);
        if (end == std::string::npos) fail();
        std::string raw = text.substr(i, end - i);
        while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
        out[key] = raw;
        i = end;
      }
      skip();
      if (i < text.size() && text[i] == '}') return out;
      if (i >= text.size() || text[i++] != ',') fail();
    }
    fail();
    return out;
  }

  std::map<std::string, std::string> params_;
  std::int64_t number_ = -1;
  std::string dir_;
  int fd_ = -1;
  int control_fd_ = -1;
  bool pruned_ = false;
  std::string control_buffer_;                                        // control pipe bytes not yet a line
  std::map<std::string, std::pair<std::string, std::string>> asked_;  // name -> (request, value)
  bool pruning_ = true;  // CLEANSWEEP_PRUNING: whether the sweep may send a notice at all
  std::string checkpoint_dir_;
  bool checkpoint_dir_made_ = false;
  std::optional<std::int64_t> resume_step_;
};

}  // namespace cleansweep
