#include "config/yaml_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace cleansweep {
namespace {

bool IsQuoted(const YAML::Node& node) { return node.Tag() == "!"; }

bool ParseInt(const std::string& text, std::int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool ParseBool(const std::string& text, bool* out) {
  if (text == "true" || text == "True" || text == "TRUE") return *out = true, true;
  if (text == "false" || text == "False" || text == "FALSE") return *out = false, true;
  return false;
}

std::string Describe(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace

Status YamlReader::Error(const YAML::Node& node, const std::string& key, const std::string& what) const {
  for (const std::string& o : overridden_) {
    if (key == o || key.rfind(o + ".", 0) == 0) return Status::InvalidInput("--set " + key + ": " + what);
  }
  std::string where = source_;
  if (node.IsDefined() && !node.Mark().is_null()) {
    where += ":" + std::to_string(node.Mark().line + 1) + ":" + std::to_string(node.Mark().column + 1);
  }
  return Status::InvalidInput(where + ": " + key + ": " + what);
}

Status YamlReader::ExpectMap(const YAML::Node& node, const std::string& key) const {
  if (!node.IsMap()) return Error(node, key, "expected a mapping of keys, got " + Describe(node));
  return Status::Ok();
}

Status YamlReader::CheckKeys(const YAML::Node& map, const std::string& key,
                             std::initializer_list<const char*> allowed) const {
  CS_RETURN_IF_ERROR(ExpectMap(map, key));
  for (const auto& item : map) {
    const std::string name = item.first.Scalar();
    bool known = false;
    std::string list;
    for (const char* a : allowed) {
      known = known || name == a;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    if (!known) {
      const std::string full = key.empty() ? name : key + "." + name;
      return Error(item.first, full, "unknown key (allowed here: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<double> YamlReader::Number(const YAML::Node& node, const std::string& key) const {
  double v;
  if (!node.IsScalar() || IsQuoted(node) || !ParseDouble(node.Scalar(), &v)) {
    return Error(node, key, "expected a number, got " + Describe(node));
  }
  return v;
}

Result<std::int64_t> YamlReader::Integer(const YAML::Node& node, const std::string& key) const {
  std::int64_t v;
  if (!node.IsScalar() || IsQuoted(node) || !ParseInt(node.Scalar(), &v)) {
    return Error(node, key, "expected a whole number, got " + Describe(node));
  }
  return v;
}

Result<bool> YamlReader::Bool(const YAML::Node& node, const std::string& key) const {
  bool v;
  if (!node.IsScalar() || IsQuoted(node) || !ParseBool(node.Scalar(), &v)) {
    return Error(node, key, "expected true or false, got " + Describe(node));
  }
  return v;
}

Result<std::string> YamlReader::String(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) return Error(node, key, "expected a text value, got " + Describe(node));
  return node.Scalar();
}

Result<Millis> YamlReader::Duration(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) return Error(node, key, "expected a duration such as 90s or 10m");
  Result<Millis> d = ParseDuration(node.Scalar());
  if (!d.ok()) return Error(node, key, d.status().message());
  return d;
}

Result<ParamValue> YamlReader::Scalar(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) {
    return Error(node, key, "expected a single value (text, number or boolean), got " + Describe(node));
  }
  const std::string& text = node.Scalar();
  if (IsQuoted(node)) return ParamValue(text);
  bool b;
  std::int64_t i;
  double d;
  if (ParseBool(text, &b)) return ParamValue(b);
  if (ParseInt(text, &i)) return ParamValue(i);
  if (ParseDouble(text, &d)) return ParamValue(d);
  return ParamValue(text);
}

}  // namespace cleansweep
