#include "json.h"

#include <cstdlib>

namespace holoquic {

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    skipSpace();
    if (pos_ != text_.size()) fail("text after the document");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 256;  // deeper nesting is hostile input, not glTF

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(pos_));
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
  }
  bool consume(const char* word) {
    size_t n = 0;
    while (word[n]) ++n;
    if (text_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size()) fail("unexpected end");
    JsonValue v;
    const char c = text_[pos_];
    if (c == '{') {
      v.type_ = JsonValue::Type::Object;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return v;
      }
      for (;;) {
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a member name");
        std::string key = string();
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != ':') fail("expected ':'");
        ++pos_;
        v.object_[key] = value(depth + 1);
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          return v;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.type_ = JsonValue::Type::Array;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return v;
      }
      for (;;) {
        v.array_.push_back(value(depth + 1));
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return v;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.type_ = JsonValue::Type::String;
      v.string_ = string();
      return v;
    }
    if (consume("true")) {
      v.type_ = JsonValue::Type::Bool;
      v.bool_ = true;
      return v;
    }
    if (consume("false")) {
      v.type_ = JsonValue::Type::Bool;
      return v;
    }
    if (consume("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const char* begin = text_.c_str() + pos_;
      char* end = nullptr;
      v.type_ = JsonValue::Type::Number;
      v.number_ = std::strtod(begin, &end);
      if (end == begin) fail("bad number");
      pos_ += size_t(end - begin);
      return v;
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  static void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > text_.size()) fail("short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && text_.compare(pos_, 2, "\\u") == 0) {  // surrogate pair
            pos_ += 2;
            const uint32_t low = hex4();
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          appendUtf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
};

namespace {
const JsonValue& nullValue() {
  static const JsonValue v;
  return v;
}
}  // namespace

JsonValue JsonValue::parse(const std::string& text) { return JsonParser(text).document(); }

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
