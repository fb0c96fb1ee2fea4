// ex19-merge-step: merge_pair_in_word, PairOrder and merge_step
// (tokenizer/merge_step.cpp): one merge of BPE training with incrementally
// maintained pair counts, against tests/fixtures/make_bpe_fixtures.py.
#include <algorithm>
#include <map>

#include "course/checks/tok_util.h"
#include "tokenizer/merge_step.h"

namespace ropegrad::course {
namespace {

using tokcheck::byte_model;
using tokcheck::literal;
using tok::BpeModel;
using tok::MergeState;
using tok::Word;

std::vector<Word> words_of(const std::vector<std::pair<std::string, int64_t>>& texts) {
  std::vector<Word> words;
  for (const auto& [text, count] : texts) {
    Word w;
    w.count = count;
    for (char c : text) w.ids.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(w));
  }
  return words;
}

// Every adjacent pair of every word counted from scratch, as (left bytes, right bytes).
using Counts = std::map<std::pair<std::string, std::string>, int64_t>;
Counts recount(const std::vector<Word>& words, const BpeModel& model) {
  Counts counts;
  for (const Word& w : words)
    for (size_t i = 0; i + 1 < w.ids.size(); ++i) counts[{model.vocab[w.ids[i]], model.vocab[w.ids[i + 1]]}] += w.count;
  return counts;
}

Counts maintained(const MergeState& state, const BpeModel& model) {
  Counts counts;
  for (const auto& [k, n] : state.pair_count)
    if (n != 0) counts[{model.vocab[tok::left_of(k)], model.vocab[tok::right_of(k)]}] = n;
  return counts;
}

std::string pair_str(const std::string& a, const std::string& b) { return "(" + literal(a) + ", " + literal(b) + ")"; }

// "merge 3: merge_step found no pair, though a recount finds 4 pairs in the
// words, the most frequent ("c", "d") 1 time": what was left when it stopped.
std::string no_pair_found(size_t rank, const Counts& before) {
  std::string out = fmt::format("merge {}: merge_step found no pair", rank);
  if (before.empty()) return out + " (a recount finds none either)";
  auto top = before.begin();
  for (auto it = before.begin(); it != before.end(); ++it)
    if (it->second > top->second) top = it;
  return out + fmt::format(", though a recount finds {} pairs in the words, the most frequent {} {} time{}{}",
                           before.size(), pair_str(top->first.first, top->first.second), top->second,
                           top->second == 1 ? "" : "s",
                           top->second == 1 ? " (every pair left occurs once: a pair seen once is merged too, until "
                                              "no pair is left)"
                                            : "");
}

std::string merge_str(const BpeModel& model, size_t rank) {
  return pair_str(model.vocab[model.merges[rank].first], model.vocab[model.merges[rank].second]);
}

// The first pair whose maintained count differs from a recount of the words
// after the merge, with what was observed: the pair's recount before and
// after the merge, and, only when the numbers show it, that its count was
// left as it was before the merge (not decremented, not added); empty when
// they agree.
std::string count_mismatch(const MergeState& state, const BpeModel& model, const Counts& before) {
  const Counts want = recount(state.words, model), have = maintained(state, model);
  const auto at = [](const Counts& c, const std::pair<std::string, std::string>& p) {
    return c.count(p) ? c.at(p) : int64_t{0};
  };
  for (const auto* m : {&want, &have}) {
    for (const auto& [pair, n] : *m) {
      const int64_t w = at(want, pair), h = at(have, pair), b = at(before, pair);
      if (w == h) continue;
      std::string seen = fmt::format("pair {} counted {} by merge_step's counts, {} by a recount of the words (before "
                                     "this merge: {})",
                                     pair_str(pair.first, pair.second), h, w, b);
      if (h == b && w < b) seen += ": the merge removed occurrences of it, and its count was not decremented";
      if (h == b && w > b) seen += ": the merge created occurrences of it, and its count was not added";
      return seen;
    }
  }
  return "";
}

bool holds(const Word& w, int32_t a, int32_t b) {
  for (size_t i = 0; i + 1 < w.ids.size(); ++i)
    if (w.ids[i] == a && w.ids[i + 1] == b) return true;
  return false;
}

// After merge `rank` of (a, b): the first word that still holds a b side by
// side (merge_step did not merge it there), as text, with whether where[(a,
// b)] lists that word and since which merge the word has held the pair
// (`history[s]`: the words after s merges); "" when none does.
std::string pair_left_in_a_word(const MergeState& state, const BpeModel& model, size_t rank,
                                const std::vector<std::vector<Word>>& history) {
  const auto [a, b] = model.merges[rank];
  // The token merge `rank` added (each merge adds one, in order) against the pair it records.
  const size_t added = model.vocab.size() - (model.merges.size() - rank);
  if (added < model.vocab.size() && model.vocab[added] != model.vocab[a] + model.vocab[b]) {
    const bool reversed = model.vocab[added] == model.vocab[b] + model.vocab[a];
    return fmt::format("merge {} is recorded as {}, but the token it added (id {}) is {}{}", rank,
                       merge_str(model, rank), added, literal(model.vocab[added]),
                       reversed ? fmt::format(": the record and the token put the two tokens in different orders "
                                              "(the token is {} then {}, the record {} first)",
                                              literal(model.vocab[b]), literal(model.vocab[a]),
                                              literal(model.vocab[a]))
                                : ", not the two tokens' bytes joined");
  }
  for (size_t wi = 0; wi < state.words.size(); ++wi) {
    const Word& w = state.words[wi];
    for (size_t i = 0; i + 1 < w.ids.size(); ++i) {
      if (w.ids[i] != a || w.ids[i + 1] != b) continue;
      std::string text;
      for (int32_t id : w.ids) text += model.vocab[id];
      std::string out = fmt::format("after merge {} {}, the word {} (count {}) still holds that pair at position {}: "
                                    "it was not merged there",
                                    rank, merge_str(model, rank), literal(text), w.count, i);
      const auto it = state.where.find(tok::pair_key(a, b));
      const bool listed = it != state.where.end() && std::find(it->second.begin(), it->second.end(),
                                                              static_cast<int32_t>(wi)) != it->second.end();
      if (listed || history.size() != rank + 1) return out;
      // Since when the word holds the pair: history[s] holds it for every s >= since.
      size_t since = rank + 1;
      while (since > 0 && holds(history[since - 1][wi], a, b)) --since;
      out += fmt::format("; where[{}] does not list this word (index {}), which has held the pair since {}", merge_str(model, rank),
                         wi, since == 0 ? "the start (before merge 0)" : fmt::format("merge {} {}", since - 1, merge_str(model, since - 1)));
      if (since == 0) return out;
      // Which side of the pair that merge's new token is on (a pair it made).
      const size_t made = model.vocab.size() - (model.merges.size() - (since - 1));
      if ((static_cast<size_t>(a) == made) != (static_cast<size_t>(b) == made))
        out += fmt::format(", which made the pair's {} token {}", static_cast<size_t>(b) == made ? "right" : "left",
                           literal(model.vocab[made]));
      return out;
    }
  }
  return "";
}

// The merge just made, against a recount of the words before it: "" when it
// is the most frequent pair and, among equally frequent ones, the greatest;
// otherwise what was observed (both counts), naming the tie rule only when
// the counts verify a tie.
std::string merge_against_recount(const Counts& before, const BpeModel& model, size_t rank,
                                  const Counts* kept = nullptr) {
  const std::string& a = model.vocab[model.merges[rank].first];
  const std::string& b = model.vocab[model.merges[rank].second];
  std::pair<std::string, std::string> best;
  int64_t most = -1;
  for (const auto& [pair, n] : before)
    if (n > most || (n == most && pair > best)) best = pair, most = n;
  const int64_t got = before.count({a, b}) ? before.at({a, b}) : 0;
  if (best == std::pair<std::string, std::string>{a, b}) return "";
  if (before.empty())  // every word one token: there was no pair to merge
    return fmt::format("merge {} is {}, though a recount finds no pair left in the words (every word is one token): "
                       "merge_step found a pair where none occurs, and returned true where false belongs",
                       rank, pair_str(a, b));
  if (got == most)
    return fmt::format("merge {} is {}, which occurs {} times by a recount of the words, as {} does: of pairs with the "
                       "same count the lexicographically greater (left bytes, right bytes) wins, here {}",
                       rank, pair_str(a, b), got, pair_str(best.first, best.second), pair_str(best.first, best.second));
  std::string counts;
  if (kept != nullptr) {  // what merge_step's own counts held for both, before this merge
    const auto at = [&](const std::pair<std::string, std::string>& p) { return kept->count(p) ? kept->at(p) : 0; };
    const int64_t k_got = at({a, b}), k_best = at(best);
    counts = k_got == got && k_best == most
                 ? "; merge_step's pair_count held the same counts for both before the merge, so the choice, not the "
                   "counts, differs"
                 : fmt::format("; merge_step's pair_count held {} and {} for them before the merge", k_got, k_best);
  }
  return fmt::format("merge {} is {}, which occurs {} times by a recount of the words; the most frequent pair is {} "
                     "({} times){}",
                     rank, pair_str(a, b), got, pair_str(best.first, best.second), most, counts);
}

// Fails with the count mismatch, if any, after merge `rank` (`before`: the recount before it).
bool counts_agree(const MergeState& state, const BpeModel& model, size_t rank, const Counts& before) {
  const std::string mismatch = count_mismatch(state, model, before);
  if (mismatch.empty()) return true;
  ADD_FAILURE() << mismatch << " (after merge " << rank << ", " << merge_str(model, rank) << ")";
  return false;
}

TEST(ex19_merge_step, merge_pair_in_word_merges_every_occurrence_left_to_right) {
  // (a, a) in "aaa" is "aa" + "a"; in "aaaa" it is "aa" + "aa".
  std::vector<int32_t> ids = {'a', 'a', 'a'};
  const bool changed = tok::merge_pair_in_word(ids, 'a', 'a', 256);
  if (!changed || ids != std::vector<int32_t>{256, 'a'}) {
    ADD_FAILURE() << "merge_pair_in_word of (a, a) in \"aaa\" gives " << tokcheck::id_list(ids) << " and returns "
                  << (changed ? "true" : "false") << ", expected [256 97] and true (left to right, occurrences do "
                  << "not overlap)";
    return;
  }
  ids = {'a', 'a', 'a', 'a', 'b', 'a', 'a'};
  tok::merge_pair_in_word(ids, 'a', 'a', 256);
  if (ids != std::vector<int32_t>{256, 256, 'b', 256}) {
    // Look-alikes on this word: only the first occurrence, only the last, the first of each run of a's.
    const std::pair<std::vector<int32_t>, const char*> forms[] = {
        {{256, 'a', 'a', 'b', 'a', 'a'}, "only the first occurrence is merged, the rest of the word copied as it is"},
        {{'a', 'a', 'a', 'a', 'b', 256}, "only the last occurrence is merged"},
        {{256, 'a', 'a', 'b', 256}, "one occurrence per run of a's is merged (the scan moves on after each merge "
                                    "past the rest of the run)"}};
    std::string named;
    for (const auto& [form, text] : forms)
      if (ids == form) named = fmt::format(": {}", text);
    ADD_FAILURE() << "merge_pair_in_word of (a, a) in \"aaaabaa\" gives " << tokcheck::id_list(ids)
                  << ", expected [256 256 98 256] (every occurrence, left to right)" << named;
    return;
  }
  ids = {'a', 'b', 'c'};
  if (tok::merge_pair_in_word(ids, 'b', 'a', 256) || ids != std::vector<int32_t>{'a', 'b', 'c'})
    ADD_FAILURE() << "merge_pair_in_word of (b, a) in \"abc\", which does not hold it, gives "
                  << tokcheck::id_list(ids) << "; expected false and the word unchanged";
}

// Which of two pairs PairOrder merges first: "x", "y", "neither (equal)" or
// "both (x before y and y before x)".
std::string merged_first(const tok::PairOrder& order, const tok::PairEntry& x, const tok::PairEntry& y) {
  const bool x_later = order(x, y), y_later = order(y, x);
  if (x_later && y_later) return "both";
  if (!x_later && !y_later) return "neither";
  return x_later ? "y" : "x";
}

TEST(ex19_merge_step, pair_order_compares_counts_then_left_bytes_then_right_bytes) {
  // PairOrder alone, on pairs of merged tokens: 256 "zb", 257 "ab", 258 "bc".
  std::vector<std::string> vocab = byte_model().vocab;
  for (const char* t : {"zb", "ab", "bc"}) vocab.push_back(t);
  const tok::PairOrder order{&vocab};
  const auto entry = [](int64_t count, int32_t a, int32_t b) { return tok::PairEntry{count, tok::pair_key(a, b)}; };
  const auto name = [&](const tok::PairEntry& e) {
    return fmt::format("{} (count {})", pair_str(vocab[tok::left_of(e.pair)], vocab[tok::right_of(e.pair)]), e.count);
  };
  // x, y, which one merges first ("x" or "y"), and what a concatenation of the two tokens' bytes would say.
  struct Probe {
    tok::PairEntry x, y;
    const char* first;
    const char* by_concatenation;
  };
  const Probe probes[] = {
      {entry(2, 'z', 'z'), entry(3, 'a', 'b'), "y", "y"},  // the count decides first
      {entry(5, 'a', 256), entry(5, 257, 'c'), "y", "x"},  // ("a", "zb") vs ("ab", "c"): "ab" > "a" decides
      {entry(5, 'a', 258), entry(5, 257, 'c'), "y", "neither"},  // ("a", "bc") vs ("ab", "c"): same bytes joined
      {entry(4, 'b', 'a'), entry(4, 'b', 'c'), "y", "y"}};       // the same left: the right decides
  std::vector<std::string> wrong;
  bool all_concatenation = true;
  for (const Probe& p : probes) {
    const std::string got = merged_first(order, p.x, p.y);
    all_concatenation = all_concatenation && got == p.by_concatenation;
    if (got == p.first) continue;
    const std::string said = got == "x"         ? name(p.x) + " first"
                             : got == "y"       ? name(p.y) + " first"
                             : got == "neither" ? "neither before the other (a tie)"
                                                : "each before the other";
    wrong.push_back(fmt::format("{} vs {}: PairOrder says {}, expected {} first", name(p.x), name(p.y), said,
                                name(p.first[0] == 'x' ? p.x : p.y)));
  }
  if (wrong.empty()) return;
  std::string text;
  for (const std::string& w : wrong) text += (text.empty() ? "" : "; ") + w;
  ADD_FAILURE() << text << " (the greater count merges first; at equal counts the greater left token's bytes, "
                << "then the greater right token's)"
                << (all_concatenation ? ": every answer is that of comparing the two tokens' bytes joined into one "
                                        "string, where the left bytes decide first"
                                      : "");
}

TEST(ex19_merge_step, merge_step_merges_a_run_of_one_token_left_to_right) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right");
  BpeModel model = byte_model();
  MergeState state(words_of({{"aaa", 1}}), model.vocab);
  const Counts before = recount(state.words, model);
  if (!tok::merge_step(state, model) || state.words[0].ids != std::vector<int32_t>{256, 'a'}) {
    ADD_FAILURE() << "merge_step on \"aaa\": the word is " << tokcheck::id_list(state.words[0].ids)
                  << ", expected [256 97]";
    return;
  }
  const std::string mismatch = count_mismatch(state, model, before);
  if (!mismatch.empty()) ADD_FAILURE() << mismatch << " (\"aaa\" after merging (a, a): only (aa, a) is left, once)";
}

// With two special tokens after the 256 bytes (ids 256, 257), the first
// merge's token takes the next id, 258: the vocabulary's size before it.
TEST(ex19_merge_step, the_new_token_takes_the_next_id_after_the_specials) {
  COURSE_REQUIRES("merge_step_merges_a_run_of_one_token_left_to_right");
  BpeModel model = byte_model({"<|a|>", "<|b|>"});
  MergeState state(words_of({{"xy", 3}}), model.vocab);
  if (!tok::merge_step(state, model)) {
    ADD_FAILURE() << "merge_step on the one word \"xy\" (3 times) found no pair";
    return;
  }
  const std::vector<int32_t>& ids = state.words[0].ids;
  if (model.vocab.size() == 259 && ids == std::vector<int32_t>{258}) return;
  std::string said;
  if (ids.size() == 1 && ids[0] != 258 && ids[0] >= 0 && static_cast<size_t>(ids[0]) < model.vocab.size())
    said = fmt::format(": id {} is {} in the vocabulary", ids[0], literal(model.vocab[static_cast<size_t>(ids[0])]));
  ADD_FAILURE() << "with the specials <|a|>, <|b|> at ids 256 and 257, merging (\"x\", \"y\") leaves the word "
                << tokcheck::id_list(ids) << " and " << model.vocab.size() << " tokens, expected [258] and 259 (the new "
                << "token's id is the vocabulary's size before the merge: 256 bytes + 2 specials)" << said;
}

TEST(ex19_merge_step, each_merge_is_made_everywhere_and_the_counts_equal_a_recount) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right");
  BpeModel model = byte_model();
  MergeState state(words_of({{"banana", 3}, {" bandana", 2}, {"aaaa", 1}, {"aaa", 2}, {"abab", 1}, {"nana", 4}, {"n", 7}}),
                   model.vocab);
  std::vector<std::vector<Word>> history = {state.words};  // the words after 0, 1, ... merges
  for (int step = 0; step < 40; ++step) {
    const Counts before = recount(state.words, model);
    if (!tok::merge_step(state, model)) {
      if (step < 10) ADD_FAILURE() << "merge_step found no pair after " << step << " merges; expected at least 10";
      return;
    }
    const std::string left = pair_left_in_a_word(state, model, static_cast<size_t>(step), history);
    history.push_back(state.words);
    if (!left.empty()) {
      ADD_FAILURE() << left;
      return;
    }
    if (!counts_agree(state, model, static_cast<size_t>(step), before)) return;
  }
  ADD_FAILURE() << "merge_step still merged after 40 steps: these words allow fewer merges";
}

TEST(ex19_merge_step, each_merge_is_the_most_frequent_pair_by_a_recount) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right",
                  "each_merge_is_made_everywhere_and_the_counts_equal_a_recount");
  // Counts that change a lot between merges: a heap entry pushed early goes stale.
  BpeModel model = byte_model();
  MergeState state(words_of({{"abcabc", 5}, {"bcd", 9}, {"cdcd", 3}, {"abd", 4}, {"dab", 6}, {"xyxy", 8}}),
                   model.vocab);
  for (size_t rank = 0; rank < 12; ++rank) {
    const Counts before = recount(state.words, model), kept = maintained(state, model);
    if (!tok::merge_step(state, model)) return;
    const std::string found = merge_against_recount(before, model, rank, &kept);
    if (!found.empty()) {
      ADD_FAILURE() << found;
      return;
    }
  }
}

TEST(ex19_merge_step, merges_match_the_python_reference_on_the_corpus) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right",
                  "the_new_token_takes_the_next_id_after_the_specials",
                  "each_merge_is_made_everywhere_and_the_counts_equal_a_recount",
                  "each_merge_is_the_most_frequent_pair_by_a_recount");
  const auto reference = tokcheck::reference_merges();
  BpeModel model = byte_model(tokcheck::fixture_specials());
  MergeState state(tok::pretoken_words(tokcheck::read_bpe_fixture("corpus.txt"), model.specials), model.vocab);
  for (size_t rank = 0; rank < reference.size(); ++rank) {
    const Counts before = recount(state.words, model);
    if (!tok::merge_step(state, model)) {
      ADD_FAILURE() << no_pair_found(rank, before) << "; the reference merges "
                    << pair_str(reference[rank].first, reference[rank].second);
      return;
    }
    if (model.merges.size() != rank + 1 || model.vocab.size() != 258 + rank + 1) {
      ADD_FAILURE() << "after merge " << rank << ": " << model.merges.size() << " merges and " << model.vocab.size()
                    << " tokens, expected " << rank + 1 << " and " << 258 + rank + 1
                    << " (one merge and one token per step)";
      return;
    }
    const std::string& a = model.vocab[model.merges[rank].first];
    const std::string& b = model.vocab[model.merges[rank].second];
    const auto& [ea, eb] = reference[rank];
    if (a == ea && b == eb && model.vocab.back() == a + b) {
      if (!counts_agree(state, model, rank, before)) return;
      continue;
    }
    if (a == ea && b == eb) {
      ADD_FAILURE() << "merge " << rank << " " << pair_str(a, b) << " makes the token "
                    << literal(model.vocab.back()) << ", not bytes(left) + bytes(right) = " << literal(a + b);
      return;
    }
    const std::string found = merge_against_recount(before, model, rank);
    ADD_FAILURE() << (found.empty() ? "" : found + "; ") << "merge " << rank << " is " << pair_str(a, b)
                  << ", the Python reference merges " << pair_str(ea, eb);
    return;
  }
}

TEST(ex19_merge_step, ties_go_to_the_lexicographically_greater_pair) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right",
                  "each_merge_is_made_everywhere_and_the_counts_equal_a_recount",
                  "each_merge_is_the_most_frequent_pair_by_a_recount");
  // "ab ab cd cd": (a, b), (' ', c) and (c, d) all occur twice; (c, d) is the
  // greatest. Then (a, b) and (' ', cd) tie; "a" > " ".
  BpeModel model = byte_model();
  MergeState state(words_of({{"ab", 1}, {" ab", 1}, {" cd", 2}}), model.vocab);
  for (const auto& [ea, eb] : std::vector<std::pair<std::string, std::string>>{{"c", "d"}, {"a", "b"}}) {
    const size_t rank = model.merges.size();
    const Counts before = recount(state.words, model);
    if (!tok::merge_step(state, model)) {
      ADD_FAILURE() << no_pair_found(rank, before);
      return;
    }
    if (model.vocab[model.merges[rank].first] != ea || model.vocab[model.merges[rank].second] != eb) {
      const std::string found = merge_against_recount(before, model, rank);
      ADD_FAILURE() << (found.empty() ? "" : found + "; ") << "merge " << rank << " is " << merge_str(model, rank)
                    << ", expected " << pair_str(ea, eb);
      return;
    }
    if (!counts_agree(state, model, rank, before)) return;
  }
}

TEST(ex19_merge_step, ties_compare_unsigned_bytes_not_token_ids) {
  COURSE_REQUIRES("merge_pair_in_word_merges_every_occurrence_left_to_right",
                  "each_merge_is_made_everywhere_and_the_counts_equal_a_recount",
                  "each_merge_is_the_most_frequent_pair_by_a_recount");
  // After (a, a), the pairs ("aa", "b") and ("z", "b") tie: "z" > "aa" as
  // bytes, though the id of "aa" (256) is greater than that of "z" (122).
  // Then ("\xff", "b") and ("a", "b") tie: byte 0xff is the greatest.
  BpeModel model = byte_model();
  MergeState state(words_of({{"aa", 10}, {"aab", 2}, {"zb", 2}, {"\xff" "b", 1}, {"ab", 1}}), model.vocab);
  const std::vector<std::pair<std::string, std::string>> expected = {{"a", "a"}, {"z", "b"}, {"aa", "b"}, {"\xff", "b"}};
  for (size_t rank = 0; rank < expected.size(); ++rank) {
    const Counts before = recount(state.words, model);
    if (!tok::merge_step(state, model)) {
      ADD_FAILURE() << no_pair_found(rank, before);
      return;
    }
    const auto& [ea, eb] = expected[rank];
    if (model.vocab[model.merges[rank].first] != ea || model.vocab[model.merges[rank].second] != eb) {
      const std::string found = merge_against_recount(before, model, rank);
      ADD_FAILURE() << (found.empty() ? "" : found + " (compared as unsigned bytes, not as token ids); ") << "merge "
                    << rank << " is " << merge_str(model, rank) << ", expected " << pair_str(ea, eb);
      return;
    }
    if (!counts_agree(state, model, rank, before)) return;
  }
}

TEST(ex19_merge_step, no_pair_left_means_false_and_nothing_changed) {
  BpeModel model = byte_model();
  MergeState state(words_of({{"a", 5}, {"b", 1}}), model.vocab);
  const bool merged = tok::merge_step(state, model);
  if (merged || model.vocab.size() != 256 || !model.merges.empty())
    ADD_FAILURE() << "words of one token each: merge_step returned " << (merged ? "true" : "false") << " with "
                  << model.vocab.size() << " tokens and " << model.merges.size()
                  << " merges; expected false, 256 and 0";
}

}  // namespace
}  // namespace ropegrad::course
