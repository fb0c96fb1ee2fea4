// count_pretokens: the first pass of BPE training.
#include <mutex>

#include "tensor/parallel.h"
#include "tokenizer/bpe_train.h"
#include "tokenizer/pretokenize.h"

namespace ropegrad::tok {

namespace {
constexpr size_t kChunkBytes = 1 << 20;  // pre-tokenize about 1 MB per task
}

std::unordered_map<std::string, int64_t> count_pretokens(std::string_view corpus,
                                                         const std::vector<std::string>& specials) {
  // Plain text between special tokens, cut further at safe places into
  // chunks of about kChunkBytes that pre-tokenize independently.
  std::vector<std::string_view> chunks;
  for (const Piece& piece : split_at_specials_linear(corpus, specials)) {
    if (piece.special >= 0) continue;
    std::string_view rest = piece.text;
    while (rest.size() > 2 * kChunkBytes) {
      size_t cut = kChunkBytes;
      while (cut < rest.size() && !is_safe_cut(rest, cut)) ++cut;
      chunks.push_back(rest.substr(0, cut));
      rest.remove_prefix(cut);
    }
    if (!rest.empty()) chunks.push_back(rest);
  }

  std::unordered_map<std::string, int64_t> counts;
  std::mutex mutex;
  parallel_for(0, static_cast<int64_t>(chunks.size()), 1, [&](int64_t begin, int64_t end) {
    std::unordered_map<std::string_view, int64_t> local;
    for (int64_t c = begin; c < end; ++c)
      for_each_pretoken(chunks[c], [&](std::string_view p) { ++local[p]; });
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [p, n] : local) counts[std::string(p)] += n;
  });
  return counts;
}

}  // namespace ropegrad::tok
