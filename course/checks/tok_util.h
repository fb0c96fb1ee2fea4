// What the tokenizer's checks (course/checks/ex19_*.cpp) share: the fixtures
// of the independent Python reference (tests/fixtures/make_bpe_fixtures.py,
// in tests/fixtures/bpe/) and readable strings for failure messages.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "course/checks/check_util.h"
#include "tokenizer/bpe_train.h"
#include "tokenizer/utf8.h"

namespace ropegrad::course::tokcheck {

// The special tokens the fixtures were made with.
inline const std::vector<std::string>& fixture_specials() {
  static const std::vector<std::string> specials = {"<|endoftext|>", "<|pad|>"};
  return specials;
}

inline std::string read_bpe_fixture(const std::string& name) {
  std::ifstream in(fixture_path("bpe/" + name), std::ios::binary);
  if (!in) throw Error("course check: cannot read tests/fixtures/bpe/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

inline std::vector<int32_t> read_ids(const std::string& name) {
  std::istringstream in(read_bpe_fixture(name));
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// The Python reference's merges, as (left bytes, right bytes), by rank.
inline std::vector<std::pair<std::string, std::string>> reference_merges() {
  std::istringstream in(read_bpe_fixture("merges_ref.txt"));
  std::vector<std::pair<std::string, std::string>> merges;
  for (std::string a, b; in >> a >> b;) merges.emplace_back(unhex(a), unhex(b));
  return merges;
}

// The Python reference's model (400 tokens: bytes, the two specials, 142
// merges), read from the fixture files, not trained: checks of encode and
// decode do not depend on the training exercises.
inline tok::BpeModel reference_model() {
  tok::BpeModel model;
  std::istringstream vocab(read_bpe_fixture("vocab_ref.txt"));
  std::unordered_map<std::string, int32_t> id_of;
  for (std::string id, hex; vocab >> id >> hex;) {
    id_of.emplace(unhex(hex), static_cast<int32_t>(model.vocab.size()));
    model.vocab.push_back(unhex(hex));
  }
  for (const auto& [a, b] : reference_merges()) model.merges.emplace_back(id_of.at(a), id_of.at(b));
  model.specials = fixture_specials();
  return model;
}

// The 256 one-byte tokens, then SPECIALS: the vocabulary every model starts
// from. The bytes are the Python reference's first 256 tokens (read from the
// fixture, so that no check spells out how training builds them).
inline tok::BpeModel byte_model(const std::vector<std::string>& specials = {}) {
  const std::vector<std::string> reference = reference_model().vocab;
  tok::BpeModel model;
  model.vocab.assign(reference.begin(), reference.begin() + 256);
  model.vocab.insert(model.vocab.end(), specials.begin(), specials.end());
  model.specials = specials;
  return model;
}

// A string as a literal literal: control characters, quotes and (in text that
// is not valid UTF-8) bytes from 0x80 escaped.
inline std::string literal(std::string_view s) {
  const bool valid = tok::first_invalid_utf8(s) < 0;
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f || (u >= 0x80 && !valid)) {
      const char* digits = "0123456789abcdef";
      out += "\\x";
      out += digits[u >> 4];
      out += digits[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

inline std::string literal_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += literal(v[i]);
  }
  return out + "]";
}

inline std::string id_list(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

}  // namespace ropegrad::course::tokcheck
