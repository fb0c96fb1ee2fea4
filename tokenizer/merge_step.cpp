// merge_pair_in_word: one merge applied to one pre-token.
#include "tokenizer/bpe_train.h"

namespace ropegrad::tok {

bool merge_pair_in_word(std::vector<int32_t>& ids, int32_t left, int32_t right, int32_t merged) {
  size_t out = 0;
  bool changed = false;
  for (size_t i = 0; i < ids.size();) {
    if (i + 1 < ids.size() && ids[i] == left && ids[i + 1] == right) {
      ids[out++] = merged;
      i += 2;
      changed = true;
    } else {
      ids[out++] = ids[i++];
    }
  }
  ids.resize(out);
  return changed;
}

}  // namespace ropegrad::tok
