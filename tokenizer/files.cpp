// save_tokenizer / load_tokenizer: GPT-2's vocab.json and merges.txt.
//
//   vocab.json          {"<token>": id, ...}  tokens through bytes_to_unicode
//   merges.txt          "#version: 0.2", then "<left> <right>" per merge, by rank
//   special_tokens.txt  one special token per line, through bytes_to_unicode
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "io/json.h"
#include "io/read_file.h"
#include "tensor/error.h"
#include "tensor/printable.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tok {

namespace {

struct VocabEntry {
  std::string token;
  int64_t id;
  int line;
};

// vocab.json: an object of string -> non-negative integer, in file order.
std::vector<VocabEntry> read_vocab_json(const std::string& path, const std::string& text) {
  const auto fail_at = [&](size_t offset, const std::string& what) {
    const TextPlace p = place_of(text, offset);
    fail("load_tokenizer", "{} line {} column {}: {}", path, p.line, p.column, what);
  };
  JsonValue root;
  try {
    root = parse_json(text, JsonLimits{"file", 64, std::numeric_limits<size_t>::max()});
  } catch (const JsonError& e) {
    fail_at(e.offset(), e.reason());
  }
  if (root.kind != JsonValue::Kind::Object) fail_at(root.offset, "expected an object of token -> id");
  std::vector<VocabEntry> entries;
  size_t counted = 0;  // lines counted up to here: the keys come in file order
  int line = 1;
  for (const JsonMember& m : root.members) {
    for (; counted < m.key_offset; ++counted) line += text[counted] == '\n';
    const JsonValue& id = m.value;
    if (id.kind != JsonValue::Kind::Integer || id.integer < 0) {
      fail_at(id.offset, "expected a non-negative integer token id");
    }
    entries.push_back({m.key, id.integer, line});
  }
  return entries;
}

std::string decode_printable(const std::string& token, const std::string& where) {
  std::string bytes;
  RG_CHECK(printable_to_bytes(token, &bytes), "load_tokenizer", "{}: {} has a character outside GPT-2's byte alphabet",
           where, quote_bytes(token));
  return bytes;
}

}  // namespace

void save_tokenizer(const BpeModel& model, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  RG_CHECK(!ec && std::filesystem::is_directory(dir), "save_tokenizer", "cannot create directory {}", dir);
  const std::string vocab_path = dir + "/vocab.json", merges_path = dir + "/merges.txt",
                    specials_path = dir + "/special_tokens.txt";
  std::ofstream vocab(vocab_path, std::ios::binary), merges(merges_path, std::ios::binary),
      specials(specials_path, std::ios::binary);
  RG_CHECK(vocab && merges && specials, "save_tokenizer", "cannot write the files in {}", dir);
  vocab << "{\n";
  for (size_t id = 0; id < model.vocab.size(); ++id)
    vocab << "  " << json_string(bytes_to_printable(model.vocab[id])) << ": " << id
          << (id + 1 < model.vocab.size() ? ",\n" : "\n");
  vocab << "}\n";
  merges << "#version: 0.2\n";
  for (const auto& [a, b] : model.merges)
    merges << bytes_to_printable(model.vocab[a]) << ' ' << bytes_to_printable(model.vocab[b]) << '\n';
  for (const std::string& s : model.specials) specials << bytes_to_printable(s) << '\n';
  RG_CHECK(vocab.good() && merges.good() && specials.good(), "save_tokenizer", "writing the files in {} failed", dir);
}

namespace {

// vocab.json and merges.txt, checked; model.specials is left empty.
BpeModel read_vocab_and_merges(const std::string& vocab_path, const std::string& merges_path) {
  BpeModel model;
  const auto entries = read_vocab_json(vocab_path, io::read_file(vocab_path, "load_tokenizer"));
  const int64_t n = static_cast<int64_t>(entries.size());
  RG_CHECK(n > 0, "load_tokenizer", "{} has no tokens", vocab_path);
  model.vocab.assign(n, std::string());
  std::vector<bool> seen(n, false);
  std::unordered_map<std::string, int32_t> id_of;
  for (const auto& [token, id, line] : entries) {
    const std::string where = fmt::format("{} line {}", vocab_path, line);
    RG_CHECK(id < n, "load_tokenizer", "{}: token {} has id {}, but there are only {} tokens (ids must be 0..{})",
             where, quote_bytes(token), id, n, n - 1);
    RG_CHECK(!seen[id], "load_tokenizer", "{}: id {} is given twice", where, id);
    seen[id] = true;
    model.vocab[id] = decode_printable(token, where);
    RG_CHECK(id_of.emplace(model.vocab[id], static_cast<int32_t>(id)).second, "load_tokenizer",
             "{}: token {} appears twice", where, quote_bytes(token));
  }
  // Every byte must have its token, or some text could not be encoded.
  for (int b = 0; b < 256; ++b) {
    RG_CHECK(id_of.count(std::string(1, static_cast<char>(b))) > 0, "load_tokenizer",
             "{}: the vocabulary has no token for byte {} ({}; written {} in vocab.json)", vocab_path, b,
             quote_bytes(std::string(1, static_cast<char>(b))), quote_bytes(bytes_to_printable(std::string(1, static_cast<char>(b)))));
  }

  std::istringstream merges(io::read_file(merges_path, "load_tokenizer"));
  std::string line;
  for (int line_no = 1; std::getline(merges, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // Windows line endings: \r is no token's byte
    const std::string where = fmt::format("{} line {}", merges_path, line_no);
    if (line_no == 1 && line.rfind("#version", 0) == 0) {
      // The one version of the format there is (GPT-2's, and what save_tokenizer writes).
      RG_CHECK(line == "#version: 0.2", "load_tokenizer", "{}: unsupported {} (only '#version: 0.2' is read)", where,
               quote_bytes(line));
      continue;
    }
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    RG_CHECK(space != std::string::npos && space > 0 && space + 1 < line.size() &&
                 line.find(' ', space + 1) == std::string::npos,
             "load_tokenizer", "{}: expected two tokens separated by one space, got {}", where, quote_bytes(line));
    const std::string left = decode_printable(line.substr(0, space), where);
    const std::string right = decode_printable(line.substr(space + 1), where);
    auto a = id_of.find(left), b = id_of.find(right);
    RG_CHECK(a != id_of.end() && b != id_of.end(), "load_tokenizer", "{}: merge {} refers to a token not in {}",
             where, quote_bytes(line), vocab_path);
    RG_CHECK(id_of.count(left + right), "load_tokenizer", "{}: merge {} makes a token not in {}", where,
             quote_bytes(line), vocab_path);
    model.merges.emplace_back(a->second, b->second);
  }
  return model;
}

}  // namespace

BpeModel load_tokenizer(const std::string& vocab_path, const std::string& merges_path,
                        const std::vector<std::string>& specials) {
  BpeModel model = read_vocab_and_merges(vocab_path, merges_path);
  add_special_tokens(model, specials, "load_tokenizer");
  return model;
}

BpeModel load_tokenizer(const std::string& dir) {
  const std::string vocab_path = dir + "/vocab.json", specials_path = dir + "/special_tokens.txt";
  BpeModel model = read_vocab_and_merges(vocab_path, dir + "/merges.txt");
  const std::unordered_set<std::string> tokens(model.vocab.begin(), model.vocab.end());
  std::string line;
  if (std::filesystem::exists(specials_path)) {
    std::istringstream specials(io::read_file(specials_path, "load_tokenizer"));
    for (int line_no = 1; std::getline(specials, line); ++line_no) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const std::string where = fmt::format("{} line {}", specials_path, line_no);
      std::string s = decode_printable(line, where);
      RG_CHECK(tokens.count(s), "load_tokenizer", "{}: special token {} is not in {}", where, quote_bytes(line),
               vocab_path);
      model.specials.push_back(std::move(s));
    }
  }
  return model;
}

}  // namespace ropegrad::tok
