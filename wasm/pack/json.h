// JSON documents (scene files) as a tree of values with checked access: parsed by nlohmann's JSON
// library (the one tinygltf uses for glTF), malformed text gets an error with the byte offset;
// looking up a member with the wrong type gets an error naming the expected type.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace holoquic {

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool isNull() const { return type_ == Type::Null; }
  bool isObject() const { return type_ == Type::Object; }
  bool isArray() const { return type_ == Type::Array; }
  bool isNumber() const { return type_ == Type::Number; }
  bool isString() const { return type_ == Type::String; }

  /// Typed access; throws std::runtime_error when the value has another type.
  double number() const;
  const std::string& string() const;
  bool boolean() const;
  const std::vector<JsonValue>& array() const;
  const std::map<std::string, JsonValue>& object() const;

  /// Object member, or a shared null value when absent (or when this is not an object).
  const JsonValue& operator[](const std::string& key) const;
  bool has(const std::string& key) const;
  /// Array element; throws when out of range.
  const JsonValue& at(size_t index) const;
  size_t size() const;  // elements of an array / members of an object, else 0

  /// Member `key` as a number, or `fallback` when absent.
  double numberOr(const std::string& key, double fallback) const;

  static JsonValue parse(const std::string& text);

 private:
  friend class JsonParser;
  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

}  // namespace holoquic
