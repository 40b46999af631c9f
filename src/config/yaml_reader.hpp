// Typed access to a yaml-cpp tree with messages that say where: "file:line:col: key: what".
// Internal to src/config.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
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

// The optional keys of one mapping of the config (`study:`, `trial:`, ...), read one way: a key
// that is absent leaves the output as it was (its default); one that is there must have the type
// and lie in the range, or the error names file:line:col and "section.key".
class ConfigSection {
 public:
  ConfigSection(const YamlReader& reader, const YAML::Node& node, std::string name)
      : r_(reader), node_(node), name_(std::move(name)) {}

  bool Has(const char* key) const { return static_cast<bool>(node_[key]); }
  YAML::Node operator[](const char* key) const { return node_[key]; }
  std::string Key(const char* key) const { return name_ + "." + key; }
  Status Error(const char* key, const std::string& what) const { return r_.Error(node_[key], Key(key), what); }

  Status Read(const char* key, std::string* out) const;
  Status Read(const char* key, bool* out) const;
  Status Read(const char* key, double* out) const;
  // "must be at least MIN", or "must be between MIN and MAX" when MAX is given.
  Status Read(const char* key, std::int64_t* out, std::int64_t min,
              std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  Status Read(const char* key, int* out, std::int64_t min, std::int64_t max) const;
  // A duration of at least `min` (1ms: "must be longer than 0s").
  Status Read(const char* key, Millis* out, Millis min = Millis(0)) const;
  Status Read(const char* key, std::optional<Millis>* out, Millis min = Millis(0)) const;

 private:
  const YamlReader& r_;
  YAML::Node node_;
  std::string name_;
};

}  // namespace cleansweep
