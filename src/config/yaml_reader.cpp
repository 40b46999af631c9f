#include "config/yaml_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "util/utf8.hpp"

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

std::string Line(const YAML::Node& node) {
  return node.Mark().is_null() ? std::string("?") : std::to_string(node.Mark().line + 1);
}

}  // namespace

Status YamlReader::CheckTree(const YAML::Node& root) const {
  struct Pending {
    YAML::Node node;
    std::string key;
    int depth;
  };
  std::vector<Pending> stack{{root, "", 0}};  // iterative: the walk itself must not recurse
  int visited = 0;
  const auto text_ok = [&](const YAML::Node& node, const std::string& key) -> Status {
    const std::string& text = node.Scalar();
    if (text.find('\0') != std::string::npos) return Error(node, key, "text contains a NUL byte");
    if (!IsValidUtf8(text)) return Error(node, key, "text is not valid UTF-8");
    return Status::Ok();
  };
  while (!stack.empty()) {
    Pending item = std::move(stack.back());
    stack.pop_back();
    if (++visited > kMaxNodes) {
      return Error(root, "config", "more than " + std::to_string(kMaxNodes) + " values (aliases expanded)");
    }
    if (item.depth > kMaxDepth) {
      return Error(item.node, item.key, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    const auto child_key = [&](const std::string& name) { return item.key.empty() ? name : item.key + "." + name; };
    if (item.node.IsScalar()) {
      CS_RETURN_IF_ERROR(text_ok(item.node, item.key.empty() ? "config" : item.key));
    } else if (item.node.IsSequence()) {
      for (size_t i = 0; i < item.node.size(); ++i) {
        stack.push_back({item.node[i], item.key + "[" + std::to_string(i) + "]", item.depth + 1});
      }
    } else if (item.node.IsMap()) {
      std::map<std::string, YAML::Node> keys;
      for (const auto& pair : item.node) {
        if (!pair.first.IsScalar()) return Error(pair.first, item.key, "a key must be plain text");
        const std::string name = pair.first.Scalar();
        CS_RETURN_IF_ERROR(text_ok(pair.first, child_key(name)));
        if (const auto seen = keys.find(name); seen != keys.end()) {
          return Error(
              pair.first, child_key(name),
              "appears twice in one mapping (lines " + Line(seen->second) + " and " + Line(pair.first) + "); keep one");
        }
        keys.emplace(name, pair.first);
        stack.push_back({pair.second, child_key(name), item.depth + 1});
      }
    }
  }
  return Status::Ok();
}

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

Status ConfigSection::Read(const char* key, std::string* out) const {
  if (!Has(key)) return Status::Ok();
  CS_ASSIGN_OR_RETURN(*out, r_.String(node_[key], Key(key)));
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, bool* out) const {
  if (!Has(key)) return Status::Ok();
  CS_ASSIGN_OR_RETURN(*out, r_.Bool(node_[key], Key(key)));
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, double* out) const {
  if (!Has(key)) return Status::Ok();
  CS_ASSIGN_OR_RETURN(*out, r_.Number(node_[key], Key(key)));
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, std::int64_t* out, std::int64_t min, std::int64_t max) const {
  if (!Has(key)) return Status::Ok();
  CS_ASSIGN_OR_RETURN(const std::int64_t v, r_.Integer(node_[key], Key(key)));
  if (v < min || v > max) {
    return Error(key, max == std::numeric_limits<std::int64_t>::max()
                          ? "must be at least " + std::to_string(min)
                          : "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  *out = v;
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, int* out, std::int64_t min, std::int64_t max) const {
  std::int64_t v = *out;
  CS_RETURN_IF_ERROR(Read(key, &v, min, max));
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, Millis* out, Millis min) const {
  if (!Has(key)) return Status::Ok();
  CS_ASSIGN_OR_RETURN(const Millis v, r_.Duration(node_[key], Key(key)));
  if (v < min) {
    return Error(key, min == Millis(1) ? std::string("must be longer than 0s")
                                       : "must be at least " + std::to_string(min.count() / 1000) + "s");
  }
  *out = v;
  return Status::Ok();
}

Status ConfigSection::Read(const char* key, std::optional<Millis>* out, Millis min) const {
  if (!Has(key)) return Status::Ok();
  Millis v(0);
  CS_RETURN_IF_ERROR(Read(key, &v, min));
  *out = v;
  return Status::Ok();
}

}  // namespace cleansweep
