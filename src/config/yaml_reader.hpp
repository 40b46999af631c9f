// Typed access to a yaml-cpp tree with messages that say where: "file:line:col: key: what".
// Internal to src/config.
#pragma once

#include <initializer_list>
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "trial/param_value.hpp"
#include "util/duration.hpp"

namespace cleansweep {

class YamlReader {
 public:
  // `overridden` holds the dotted keys set with --set; errors under them name the flag.
  YamlReader(std::string source, std::set<std::string> overridden)
      : source_(std::move(source)), overridden_(std::move(overridden)) {}

  Status Error(const YAML::Node& node, const std::string& key, const std::string& what) const;

  // Refuses what no config can mean before any key is read: a key twice in one mapping (both
  // lines named), text with a NUL byte or invalid UTF-8, nesting deeper than kMaxDepth, and more
  // than kMaxNodes nodes counted with aliases expanded (a "billion laughs" document).
  Status CheckTree(const YAML::Node& root) const;
  static constexpr int kMaxDepth = 32;
  static constexpr int kMaxNodes = 200000;

  // Fails naming the first key of `map` that is not in `allowed`, listing the allowed ones.
  Status CheckKeys(const YAML::Node& map, const std::string& key, std::initializer_list<const char*> allowed) const;
  Status ExpectMap(const YAML::Node& node, const std::string& key) const;

  Result<double> Number(const YAML::Node& node, const std::string& key) const;
  Result<std::int64_t> Integer(const YAML::Node& node, const std::string& key) const;
  Result<bool> Bool(const YAML::Node& node, const std::string& key) const;
  Result<std::string> String(const YAML::Node& node, const std::string& key) const;
  Result<Millis> Duration(const YAML::Node& node, const std::string& key) const;
  // A categorical choice or fixed value: bool, int, float or string (quoted text stays a string).
  Result<ParamValue> Scalar(const YAML::Node& node, const std::string& key) const;

 private:
  std::string source_;
  std::set<std::string> overridden_;
};

}  // namespace cleansweep
