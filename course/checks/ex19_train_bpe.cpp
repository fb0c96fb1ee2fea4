// ex19-train-bpe: train_bpe's loop (tokenizer/bpe_train.cpp), against the
// Python reference's vocabulary and merges (tests/fixtures/make_bpe_fixtures.py).
#include "course/checks/tok_util.h"

namespace ropegrad::course {
namespace {

using tokcheck::literal;
using tok::BpeModel;

// "one merge too many" and the like, for a vocabulary of the wrong size.
std::string size_diagnosis(int64_t got, int64_t want) {
  const int64_t d = got - want;
  if (d == 1) return "one merge too many";
  if (d == -1) return "one merge too few";
  return std::to_string(d > 0 ? d : -d) + (d > 0 ? " merges too many" : " merges too few");
}

TEST(ex19_train_bpe, vocab_and_merges_match_the_python_reference) {
  const BpeModel model = tok::train_bpe(tokcheck::read_bpe_fixture("corpus.txt"), 400, tokcheck::fixture_specials());
  std::istringstream vocab(tokcheck::read_bpe_fixture("vocab_ref.txt"));
  std::vector<std::string> expected;
  for (std::string id, hex; vocab >> id >> hex;) expected.push_back(tokcheck::unhex(hex));
  if (model.vocab.size() != expected.size()) {
    ADD_FAILURE() << size_diagnosis(static_cast<int64_t>(model.vocab.size()), 400) << ": vocab_size 400 gave "
                  << model.vocab.size() << " tokens";
    return;
  }
  for (size_t id = 0; id < expected.size(); ++id) {
    if (model.vocab[id] != expected[id]) {
      ADD_FAILURE() << "token " << id << " is " << literal(model.vocab[id]) << ", the Python reference has "
                    << literal(expected[id]) << (id < 258 ? " (ids: 0-255 the bytes, then the specials in order)" : "");
      return;
    }
  }
  const auto merges = tokcheck::reference_merges();
  if (model.merges.size() != merges.size()) {
    ADD_FAILURE() << model.merges.size() << " merges, the Python reference has " << merges.size();
    return;
  }
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto [a, b] = model.merges[r];
    if (model.vocab[a] != merges[r].first || model.vocab[b] != merges[r].second) {
      ADD_FAILURE() << "merge " << r << " is (" << literal(model.vocab[a]) << ", " << literal(model.vocab[b])
                    << "), the Python reference has (" << literal(merges[r].first) << ", " << literal(merges[r].second)
                    << ")";
      return;
    }
  }
}

TEST(ex19_train_bpe, the_vocabulary_has_exactly_vocab_size_tokens) {
  const std::string corpus = tokcheck::read_bpe_fixture("corpus.txt");
  for (const auto& [size, specials] : std::vector<std::pair<int64_t, std::vector<std::string>>>{
           {259, {}}, {300, {}}, {258, {"<|endoftext|>", "<|pad|>"}}, {259, {"<|endoftext|>", "<|pad|>"}},
           {280, {"<|endoftext|>"}}}) {
    const BpeModel model = tok::train_bpe(corpus, size, specials);
    const int64_t got = static_cast<int64_t>(model.vocab.size());
    const int64_t merges = static_cast<int64_t>(model.merges.size());
    if (got != size || merges != size - 256 - static_cast<int64_t>(specials.size())) {
      ADD_FAILURE() << size_diagnosis(got, size) << ": vocab_size " << size << " with " << specials.size()
                    << " special tokens gave " << got << " tokens and " << merges << " merges (vocab_size = 256 + "
                    << "specials + merges)";
      return;
    }
  }
}

TEST(ex19_train_bpe, ids_are_bytes_then_specials_then_one_per_merge) {
  const std::vector<std::string> specials = {"<|pad|>", "<|endoftext|>"};
  const BpeModel model = tok::train_bpe(tokcheck::read_bpe_fixture("corpus.txt"), 300, specials);
  if (model.vocab.size() != 300 || model.merges.size() != 42 || model.specials != specials) {
    ADD_FAILURE() << model.vocab.size() << " tokens, " << model.merges.size() << " merges and "
                  << model.specials.size() << " specials; expected 300, 42 and the 2 given";
    return;
  }
  for (int b = 0; b < 256; ++b) {
    if (model.vocab[b] != std::string(1, static_cast<char>(b))) {
      ADD_FAILURE() << "token " << b << " is " << literal(model.vocab[b]) << ", expected the single byte " << b;
      return;
    }
  }
  if (model.vocab[256] != specials[0] || model.vocab[257] != specials[1]) {
    ADD_FAILURE() << "tokens 256 and 257 are " << literal(model.vocab[256]) << " and " << literal(model.vocab[257])
                  << ", expected the special tokens in the order given";
    return;
  }
  for (size_t r = 0; r < model.merges.size(); ++r) {
    const auto [a, b] = model.merges[r];
    if (model.vocab[258 + r] != model.vocab[a] + model.vocab[b]) {
      ADD_FAILURE() << "token " << 258 + r << " is " << literal(model.vocab[258 + r]) << ", but merge " << r
                    << " makes " << literal(model.vocab[a] + model.vocab[b]);
      return;
    }
  }
}

TEST(ex19_train_bpe, a_vocab_size_below_256_plus_the_specials_is_refused) {
  expect_error([] { tok::train_bpe("abc", 257, {"<a>", "<b>"}); }, {"train_bpe", "257", "258"},
               "vocab_size 257 with 2 special tokens");
  expect_error([] { tok::train_bpe("abc", 100, {}); }, {"train_bpe", "100", "256"}, "vocab_size 100");
  // Exactly 256 + specials: no merge at all.
  const BpeModel model = tok::train_bpe("abc abc", 257, {"<a>"});
  if (model.vocab.size() != 257 || !model.merges.empty())
    ADD_FAILURE() << "vocab_size 257 with 1 special token gave " << model.vocab.size() << " tokens and "
                  << model.merges.size() << " merges, expected 257 and none";
}

TEST(ex19_train_bpe, training_stops_early_when_no_pair_is_left) {
  const BpeModel model = tok::train_bpe("xy<|s|>xy<|s|>xy", 300, {"<|s|>"});
  if (model.vocab.size() != 258 || model.vocab.back() != "xy")
    ADD_FAILURE() << "\"xy<|s|>xy<|s|>xy\" with vocab_size 300 gave " << model.vocab.size()
                  << " tokens; expected 258 (the bytes, <|s|>, \"xy\": then no pair is left)";
}

}  // namespace
}  // namespace ropegrad::course
