// Tokenizer construction and encode.
#include <limits>

#include "tensor/error.h"
#include "tensor/exercise.h"
#include "tensor/printable.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::tok {

namespace {
uint64_t pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
constexpr size_t kMaxCache = 1 << 20;  // cached pre-tokens before the cache is cleared
}  // namespace

Tokenizer::Tokenizer(BpeModel model) : model_(std::move(model)) {
  const auto& vocab = model_.vocab;
  std::unordered_map<std::string, int32_t> id_of;
  for (int32_t id = 0; id < static_cast<int32_t>(vocab.size()); ++id) id_of.emplace(vocab[id], id);
  for (int b = 0; b < 256; ++b) {
    auto it = id_of.find(std::string(1, static_cast<char>(b)));
    RG_CHECK(it != id_of.end(), "Tokenizer", "the vocabulary has no token for byte {} ({})", b,
             quote_bytes(std::string(1, static_cast<char>(b))));
    byte_id_[b] = it->second;
  }
  const int32_t n = static_cast<int32_t>(vocab.size());
  for (int32_t r = 0; r < static_cast<int32_t>(model_.merges.size()); ++r) {
    const auto [a, b] = model_.merges[r];
    RG_CHECK(a >= 0 && a < n && b >= 0 && b < n, "Tokenizer", "merge {} refers to token ids ({}, {}) outside [0, {})",
             r, a, b, n);
    auto it = id_of.find(vocab[a] + vocab[b]);
    RG_CHECK(it != id_of.end(), "Tokenizer", "merge {} ({}, {}) makes a token that is not in the vocabulary", r, a, b);
    rank_.emplace(pair_key(a, b), std::make_pair(r, it->second));
  }
  for (const std::string& s : model_.specials) {
    auto it = id_of.find(s);
    RG_CHECK(it != id_of.end(), "Tokenizer", "special token {} is not in the vocabulary", quote_bytes(s));
    special_id_.push_back(it->second);
  }
}

std::vector<int32_t> Tokenizer::encode_pretoken_plain(std::string_view piece) const {
  // BEGIN EXERCISE ex19-encode
  std::vector<int32_t> ids;
  for (char c : piece) ids.push_back(byte_id_[static_cast<uint8_t>(c)]);
  // Merge the lowest-rank pair present, everywhere in the piece, until none is left.
  while (ids.size() >= 2) {
    int32_t best_rank = std::numeric_limits<int32_t>::max(), merged = -1;
    int32_t left = 0, right = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = rank_.find(pair_key(ids[i], ids[i + 1]));
      if (it != rank_.end() && it->second.first < best_rank) {
        best_rank = it->second.first;
        merged = it->second.second;
        left = ids[i], right = ids[i + 1];
      }
    }
    if (merged < 0) break;
    merge_pair_in_word(ids, left, right, merged);
  }
  return ids;
  // END EXERCISE ex19-encode
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  PretokenCache cache;  // this call's own: two threads never share one
  return encode(text, cache);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, PretokenCache& cache) const {
  // BEGIN EXERCISE ex19-encode
  std::vector<int32_t> out;
  for (const Piece& piece : split_at_specials(text, model_.specials)) {
    if (piece.special >= 0) {
      out.push_back(special_id_[piece.special]);
      continue;
    }
    for_each_pretoken(piece.text, [&](std::string_view p) {
      auto it = cache.find(std::string(p));
      if (it == cache.end()) {
        if (cache.size() >= kMaxCache) cache.clear();
        it = cache.emplace(std::string(p), encode_pretoken(p)).first;
      }
      out.insert(out.end(), it->second.begin(), it->second.end());
    });
  }
  return out;
  // END EXERCISE ex19-encode
}

std::vector<int32_t> Tokenizer::encode_linear(std::string_view text) const {
  PretokenCache cache;
  return encode_linear(text, cache);
}

std::vector<int32_t> Tokenizer::encode_linear(std::string_view text, PretokenCache& cache) const {
  std::vector<int32_t> out;
  for (const Piece& piece : split_at_specials_linear(text, model_.specials)) {
    if (piece.special >= 0) {
      out.push_back(special_id_[piece.special]);
      continue;
    }
    // No special token lies wholly inside a plain piece, so encode() splits
    // it nowhere and scans it once per special.
    const std::vector<int32_t> ids = encode(piece.text, cache);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

void Tokenizer::encode_stream(std::istream& in, const std::function<void(const std::vector<int32_t>&)>& emit,
                              size_t chunk_bytes, size_t max_buffer_bytes) const {
  RG_CHECK(chunk_bytes > 0, "encode_stream", "chunk size must be positive");
  RG_CHECK(max_buffer_bytes >= chunk_bytes, "encode_stream", "the buffer limit ({}) must be at least one chunk ({})",
           max_buffer_bytes, chunk_bytes);
  size_t longest_special = 0;
  for (const std::string& s : model_.specials) longest_special = std::max(longest_special, s.size());
  // Does an occurrence of a special token span pos? Only the |s| - 1 bytes on
  // each side of pos can hold one.
  auto inside_special = [&](std::string_view buf, size_t pos) {
    for (const std::string& s : model_.specials) {
      const size_t from = pos >= s.size() ? pos - s.size() + 1 : 0;
      const std::string_view around = buf.substr(from, pos + s.size() - 1 - from);
      for (size_t at = around.find(s); at != std::string_view::npos; at = around.find(s, at + 1))
        if (from + at < pos && from + at + s.size() > pos) return true;
    }
    return false;
  };
  PretokenCache cache;  // one for the whole stream: its pre-tokens repeat across chunks
  std::string buffer;
  std::string chunk(chunk_bytes, '\0');
  size_t unsafe_up_to = 0;  // every position in (0, unsafe_up_to] was found no safe cut
  while (true) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    buffer.append(chunk.data(), got);
    if (got == 0) break;
    // Keep a tail long enough that the characters after the cut (and any
    // special token reaching across it) are seen whole.
    if (buffer.size() <= longest_special + 1) continue;
    const size_t top = buffer.size() - longest_special - 1;
    size_t pos = top;
    while (pos > unsafe_up_to && !(is_safe_cut(buffer, pos) && !inside_special(buffer, pos))) --pos;
    if (pos == unsafe_up_to) {
      unsafe_up_to = top;
      if (buffer.size() < max_buffer_bytes) continue;  // no safe place yet: read more
      // A run this long without a place where the pattern cuts (text with no
      // space or newline after a non-space): cut at a character boundary
      // outside any special token, so memory stays bounded. Only here can the
      // ids differ from encode() of the whole text: one pre-token of more
      // than max_buffer_bytes is encoded as two.
      pos = top;
      while (pos > 0 && ((static_cast<unsigned char>(buffer[pos]) & 0xC0) == 0x80 || inside_special(buffer, pos))) --pos;
      if (pos == 0) continue;
    }
    emit(encode_linear(std::string_view(buffer).substr(0, pos), cache));
    buffer.erase(0, pos);
    unsafe_up_to = 0;
  }
  if (!buffer.empty()) emit(encode_linear(buffer, cache));
}

}  // namespace ropegrad::tok
