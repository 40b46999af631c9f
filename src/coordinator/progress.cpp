#include "coordinator/progress.hpp"

#include <cinttypes>
#include <mutex>

#include "util/duration.hpp"
#include "util/utf8.hpp"

namespace cleansweep {
namespace {

std::string Seconds(double s) { return FormatDuration(Millis(static_cast<long long>(s * 1000))); }

}  // namespace

Progress::Progress(std::FILE* out, bool live, const StudyConfig& config) : out_(out), live_(live), config_(config) {}

std::string Progress::Counter(const ProgressState& s) {
  char buf[64];
  const int width = static_cast<int>(std::to_string(s.total).size());
  std::snprintf(buf, sizeof buf, "[%*" PRId64 "/%" PRId64 "]", width, s.done, s.total);
  return buf;
}

std::string Progress::StatusLine(const ProgressState& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "running %" PRId64 " failed %" PRId64, s.running, s.failed);
  std::string line = buf;
  if (s.best_value) {
    std::snprintf(buf, sizeof buf, " best %.6g (#%" PRId64 ")", *s.best_value, s.best_number);
    line += buf;
  }
  if (s.front_size) line += " front " + std::to_string(*s.front_size);
  line += " elapsed " + Seconds(s.elapsed_s);
  if (s.done > s.done_before && s.done < s.total) {
    line += " ETA " +
            Seconds(s.elapsed_s / static_cast<double>(s.done - s.done_before) * static_cast<double>(s.total - s.done));
  }
  return line;
}

std::string Progress::TrialLine(const TrialRecord& r, const StudyConfig& config) {
  std::string line = "trial " + std::to_string(r.number) + " " + TrialStateName(r.state);
  if (r.values.size() == config.study.metrics.size() && config.study.multi_objective()) {
    for (size_t i = 0; i < r.values.size(); ++i) {
      line += " " + config.study.metrics[i].name + "=" + FormatValue(r.values[i]);
    }
  } else if (r.value) {
    line += " " + config.study.metric + "=" + FormatValue(*r.value);
  }
  if (r.infeasible()) line += " (infeasible: outside study.constraints)";
  line += " in " + Seconds(r.duration()) + " on " + r.host + (r.gpu.empty() ? "" : " gpu " + r.gpu);
  if (r.gpus > 1) line += " (" + std::to_string(r.gpus) + " workers: ranks " + r.workers + ")";  // a gang
  std::string params;
  for (const ParamSpec& spec : config.space.params()) {
    const auto it = r.params.find(spec.name);
    if (it == r.params.end() || spec.kind == ParamKind::kFixed) continue;
    params += (params.empty() ? "" : " ") + spec.name + "=" + FormatValue(it->second);
  }
  line += " (" + params + ")";
  if (!r.reason.empty()) line += ": " + ForTerminal(r.reason);  // it may hold a trial's words
  return line;
}

void Progress::ClearLive() {
  if (live_drawn_) std::fputs("\r\033[K", out_);
  live_drawn_ = false;
}

void Progress::Message(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLive();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void Progress::TrialFinished(const TrialRecord& record, const ProgressState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLive();
  if (live_) {
    std::fprintf(out_, "%s %s\n", Counter(state).c_str(), TrialLine(record, config_).c_str());
    Tick(state);
  } else {
    std::fprintf(out_, "%s %s | %s\n", Counter(state).c_str(), TrialLine(record, config_).c_str(),
                 StatusLine(state).c_str());
  }
  std::fflush(out_);
}

void Progress::Tick(const ProgressState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!live_) return;
  std::fprintf(out_, "\r\033[K%s %s", Counter(state).c_str(), StatusLine(state).c_str());
  live_drawn_ = true;
  std::fflush(out_);
}

void Progress::Finish(const ProgressState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLive();
  std::fprintf(out_, "%s %s\n", Counter(state).c_str(), StatusLine(state).c_str());
  std::fflush(out_);
}

}  // namespace cleansweep
