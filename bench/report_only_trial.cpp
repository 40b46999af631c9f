// The cheapest trial there is: it reports its objective (a function of x) and exits. Built as a
// program (trial.launcher: spawn) and, with REPORT_ONLY_PLUGIN, as a fork-server plugin, for the
// end-to-end throughput benchmark (bench/run_throughput_bench.sh).
#include <cleansweep/trial.hpp>

namespace {

int ReportOnly(int, char**) {
  cleansweep::Trial trial = cleansweep::Trial::FromEnvironment();
  const double x = trial.GetDouble("x", 0.5);
  trial.Finish((x - 0.3) * (x - 0.3));
  return 0;
}

}  // namespace

#ifdef REPORT_ONLY_PLUGIN
CLEANSWEEP_TRIAL_PLUGIN(ReportOnly)
#else
int main(int argc, char** argv) { return ReportOnly(argc, argv); }
#endif
