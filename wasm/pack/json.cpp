#include "json.h"

#include <nlohmann/json.hpp>

namespace holoquic {

/// Converts nlohmann's tree (the JSON library tinygltf also uses) into ours.
class JsonParser {
 public:
  static JsonValue convert(const nlohmann::json& from, int depth) {
    if (depth > kMaxDepth) throw std::runtime_error("JSON: nesting too deep at byte 0");
    JsonValue v;
    switch (from.type()) {
      case nlohmann::json::value_t::object:
        v.type_ = JsonValue::Type::Object;
        for (const auto& [key, member] : from.items()) v.object_[key] = convert(member, depth + 1);
        break;
      case nlohmann::json::value_t::array:
        v.type_ = JsonValue::Type::Array;
        for (const auto& element : from) v.array_.push_back(convert(element, depth + 1));
        break;
      case nlohmann::json::value_t::string:
        v.type_ = JsonValue::Type::String;
        v.string_ = from.get<std::string>();
        break;
      case nlohmann::json::value_t::boolean:
        v.type_ = JsonValue::Type::Bool;
        v.bool_ = from.get<bool>();
        break;
      case nlohmann::json::value_t::number_integer:
      case nlohmann::json::value_t::number_unsigned:
      case nlohmann::json::value_t::number_float:
        v.type_ = JsonValue::Type::Number;
        v.number_ = from.get<double>();
        break;
      default:
        break;  // null
    }
    return v;
  }

 private:
  static constexpr int kMaxDepth = 256;  // deeper nesting is hostile input, not a scene
};

namespace {
const JsonValue& nullValue() {
  static const JsonValue v;
  return v;
}
}  // namespace

JsonValue JsonValue::parse(const std::string& text) {
  nlohmann::json tree;
  try {
    tree = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line L, column C: what" → "JSON: what at
    // byte N", the offset callers turn into their own line and column.
    const std::string message = e.what();
    const size_t colon = message.find(": ");
    const std::string what = colon == std::string::npos ? message : message.substr(colon + 2);
    throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(e.byte > 0 ? e.byte - 1 : 0));
  }
  return JsonParser::convert(tree, 0);
}

double JsonValue::number() const {
  if (type_ != Type::Number) throw std::runtime_error("JSON: expected a number");
  return number_;
}
const std::string& JsonValue::string() const {
  if (type_ != Type::String) throw std::runtime_error("JSON: expected a string");
  return string_;
}
bool JsonValue::boolean() const {
  if (type_ != Type::Bool) throw std::runtime_error("JSON: expected true or false");
  return bool_;
}
const std::vector<JsonValue>& JsonValue::array() const {
  if (type_ != Type::Array) throw std::runtime_error("JSON: expected an array");
  return array_;
}
const std::map<std::string, JsonValue>& JsonValue::object() const {
  if (type_ != Type::Object) throw std::runtime_error("JSON: expected an object");
  return object_;
}
const JsonValue& JsonValue::operator[](const std::string& key) const {
  if (type_ != Type::Object) return nullValue();
  const auto it = object_.find(key);
  return it == object_.end() ? nullValue() : it->second;
}
bool JsonValue::has(const std::string& key) const { return type_ == Type::Object && object_.count(key) > 0; }
const JsonValue& JsonValue::at(size_t index) const {
  const auto& a = array();
  if (index >= a.size()) throw std::runtime_error("JSON: index " + std::to_string(index) + " out of range");
  return a[index];
}
size_t JsonValue::size() const { return type_ == Type::Array ? array_.size() : type_ == Type::Object ? object_.size() : 0; }
double JsonValue::numberOr(const std::string& key, double fallback) const {
  const JsonValue& v = (*this)[key];
  return v.isNull() ? fallback : v.number();
}

}  // namespace holoquic
