// Parses the `space:` section. Internal to src/config.
#pragma once

#include "config/yaml_reader.hpp"
#include "space/search_space.hpp"

namespace cleansweep {

Result<SearchSpace> ParseSpace(const YamlReader& reader, const YAML::Node& node);

}  // namespace cleansweep
