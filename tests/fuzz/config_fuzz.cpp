// Fuzz target: the config loader (YAML -> StudyConfig, with and without a --set override), and
// what follows a config that loads: the space's description, its JSON, and loading its own text.
#include <cstdint>
#include <string>

#include "config/study_config.hpp"
#include "study/table_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{}, std::vector<std::string>{"study.n_trials=3", "sampler.kind=tpe"}}) {
    cleansweep::Result<cleansweep::StudyConfig> config = cleansweep::LoadConfigText(text, "fuzz.yaml", sets);
    if (!config.ok()) continue;
    (void)config->space.Describe();
    (void)cleansweep::SpaceJson(config->space);
    (void)cleansweep::LoadConfigText(config->yaml_text, "fuzz.yaml (again)");
  }
  return 0;
}
