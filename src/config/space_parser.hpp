// Parses the `space:` section. Internal to src/config.
#pragma once

#include "config/yaml_reader.hpp"
#include "space/search_space.hpp"

namespace cleansweep {

// Letters, digits and _, not starting with a digit: what parameter and metric names must be
// (they become column names).
bool IsIdentifier(const std::string& name);

Result<SearchSpace> ParseSpace(const YamlReader& reader, const YAML::Node& node);

}  // namespace cleansweep
