// A BpeModel from CS336's forms (course/adapters.h: get_tokenizer): merges as
// pairs of byte strings, and special tokens added to the vocabulary when absent.
#include <algorithm>
#include <unordered_map>

#include "tensor/error.h"
#include "tensor/printable.h"
#include "tokenizer/tokenizer.h"

namespace ropegrad::tok {

namespace {

// Token bytes -> id; two ids with the same bytes are an Error (encode could not choose).
std::unordered_map<std::string, int32_t> ids_by_bytes(const std::vector<std::string>& vocab, const std::string& op) {
  std::unordered_map<std::string, int32_t> id_of;
  for (int32_t id = 0; id < static_cast<int32_t>(vocab.size()); ++id) {
    const auto [it, added] = id_of.emplace(vocab[id], id);
    RG_CHECK(added, op, "tokens {} and {} are the same bytes {}", it->second, id, quote_bytes(vocab[id]));
  }
  return id_of;
}

}  // namespace

void add_special_tokens(BpeModel& model, const std::vector<std::string>& specials, const std::string& op) {
  std::unordered_map<std::string, int32_t> id_of = ids_by_bytes(model.vocab, op);
  for (size_t i = 0; i < specials.size(); ++i) {
    const std::string& s = specials[i];
    RG_CHECK(!s.empty(), op, "special token {} is empty", i);
    RG_CHECK(std::find(specials.begin(), specials.begin() + static_cast<std::ptrdiff_t>(i), s) ==
                 specials.begin() + static_cast<std::ptrdiff_t>(i),
             op, "special token {} is given twice", quote_bytes(s));
    if (id_of.emplace(s, static_cast<int32_t>(model.vocab.size())).second) model.vocab.push_back(s);
  }
  model.specials = specials;
}

BpeModel bpe_model_from_bytes(std::vector<std::string> vocab,
                              const std::vector<std::pair<std::string, std::string>>& merges,
                              const std::vector<std::string>& specials, const std::string& op) {
  BpeModel model;
  model.vocab = std::move(vocab);
  const std::unordered_map<std::string, int32_t> id_of = ids_by_bytes(model.vocab, op);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto a = id_of.find(left), b = id_of.find(right);
    RG_CHECK(a != id_of.end() && b != id_of.end(), op, "merge {} ({} {}): {} is not in the vocabulary", rank,
             quote_bytes(left), quote_bytes(right), quote_bytes(a == id_of.end() ? left : right));
    model.merges.emplace_back(a->second, b->second);
  }
  add_special_tokens(model, specials, op);
  return model;
}

}  // namespace ropegrad::tok
