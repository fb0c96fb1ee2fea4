// Byte-level BPE: pre-tokenization, training, encode/decode, the GPT-2 file
// format and streaming. tests/fixtures/make_bpe_fixtures.py (plain Python with
// the `regex` module, independent of ropegrad) wrote the reference merges,
// vocabulary and encodings in tests/fixtures/bpe/; this test needs no Python.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/tmp_file.h"
#include "io/token_memmap.h"
#include "train/run_files.h"
#include "tensor/printable.h"
#include "tasks/token_text_task.h"
#include "train/trainer.h"
#include "tests/support/test_util.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_EncodeHeap: 1 unless a workspace stubbed ex19-encode
#if ROPEGRAD_HAS_EncodeHeap
#include "tensor/fast_forms.h"
#include "tokenizer/fast/encode_heap.h"
#endif

using namespace ropegrad;
using namespace ropegrad::tok;
using namespace ropegrad::testing;

namespace ropegrad::tasks {
int run_tokenize(int argc, char** argv);  // cli/tokenize_cli.cpp
}

namespace {

const std::vector<std::string> kSpecials = {"<|endoftext|>", "<|pad|>"};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::vector<int32_t> read_ids(const std::string& path) {
  std::istringstream in(read_all(path));
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

std::vector<std::string> pretokens(std::string_view text) {
  std::vector<std::string> out;
  for_each_pretoken(text, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

const BpeModel& fixture_model() {
  static const BpeModel model = train_bpe(read_all(fixture_path("bpe/corpus.txt")), 400, kSpecials);
  return model;
}

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("ropegrad_tok_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

// ---- pre-tokenization ---------------------------------------------------------------

TEST(Pretokenize, GptTwoPatternCases) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pretokens("Hello, world!"), (V{"Hello", ",", " world", "!"}));
  EXPECT_EQ(pretokens("we'll they're I'm it's"), (V{"we", "'ll", " they", "'re", " I", "'m", " it", "'s"}));
  EXPECT_EQ(pretokens("abc123 45"), (V{"abc", "123", " 45"}));
  // \s+(?!\S) leaves the last space to the next word; a run at the end stays whole.
  EXPECT_EQ(pretokens("a   b  "), (V{"a", "  ", " b", "  "}));
  EXPECT_EQ(pretokens("a\n\nb"), (V{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pretokens("x\tb"), (V{"x", "\t", "b"}));
  EXPECT_EQ(pretokens(" 'x"), (V{" '", "x"}));
  EXPECT_EQ(pretokens("Café 東京 Ωmega"), (V{"Café", " 東京", " Ωmega"}));
  EXPECT_EQ(pretokens("½²"), (V{"½²"}));  // \p{N} includes No
  EXPECT_EQ(pretokens("🙂🙂 !!"), (V{"🙂🙂", " !!"}));
  // U+00A0 and U+3000 are \s; U+200B is not.
  EXPECT_EQ(pretokens("a\u00a0b"), (V{"a", "\u00a0", "b"}));
  EXPECT_EQ(pretokens("a\u3000\u3000b"), (V{"a", "\u3000", "\u3000", "b"}));
  // Invalid bytes are characters of their own class and never lost.
  EXPECT_EQ(pretokens("ab\xff\xfe cd"), (V{"ab", "\xff\xfe", " cd"}));
}

TEST(Pretokenize, SpecialTokensLongestFirst) {
  const std::vector<std::string> specials = {"<|a|>", "<|a|><|a|>"};
  auto pieces = split_at_specials("x<|a|><|a|>y<|a|>", specials);
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].text, "x");
  EXPECT_EQ(pieces[1].special, 1);
  EXPECT_EQ(pieces[2].text, "y");
  EXPECT_EQ(pieces[3].special, 0);
}

TEST(Pretokenize, SafeCutsSplitTheSameWay) {
  const std::string text = read_all(fixture_path("bpe/corpus.txt"));
  const auto whole = pretokens(text);
  int cuts = 0;
  for (size_t pos = 1; pos < text.size(); ++pos) {
    if (!is_safe_cut(text, pos)) continue;
    ++cuts;
    auto parts = pretokens(std::string_view(text).substr(0, pos));
    auto rest = pretokens(std::string_view(text).substr(pos));
    parts.insert(parts.end(), rest.begin(), rest.end());
    ASSERT_EQ(parts, whole) << "cut at " << pos;
  }
  EXPECT_GT(cuts, 100);
}

TEST(Pretokenize, ParallelCountsEqualSerialCounts) {
  // Over 2 MB without a special token: count_pretokens cuts it into chunks.
  std::string text;
  const std::string corpus = read_all(fixture_path("bpe/corpus.txt"));
  while (text.size() < (5u << 20)) text += corpus;
  std::unordered_map<std::string, int64_t> serial;
  for_each_pretoken(text, [&](std::string_view p) { ++serial[std::string(p)]; });
  EXPECT_EQ(count_pretokens(text, {}), serial);
}

// ---- UTF-8 ----------------------------------------------------------------------------

TEST(Utf8, ReplacementMatchesPython) {
  // Expected values from Python: bytes.decode("utf-8", errors="replace").
  EXPECT_EQ(replace_invalid_utf8("a\xff" "b"), "a\uFFFD" "b");
  EXPECT_EQ(replace_invalid_utf8("\xe2\x82"), "\uFFFD");            // truncated: one maximal subpart
  EXPECT_EQ(replace_invalid_utf8("\xe2\x82x"), "\uFFFDx");
  EXPECT_EQ(replace_invalid_utf8("\xc0\xaf"), "\uFFFD\uFFFD");     // overlong: two
  EXPECT_EQ(replace_invalid_utf8("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");  // surrogate: three
  EXPECT_EQ(replace_invalid_utf8("\xf0\x9f\x99"), "\uFFFD");
  EXPECT_EQ(replace_invalid_utf8("\xf4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");  // > U+10FFFF
  EXPECT_EQ(replace_invalid_utf8("ok 🙂"), "ok 🙂");
  EXPECT_EQ(first_invalid_utf8("abc\xe2\x82"), 3);
  EXPECT_EQ(first_invalid_utf8("abc"), -1);
}

TEST(Utf8, BytesToUnicodeIsGptTwos) {
  EXPECT_EQ(bytes_to_printable(" "), "Ġ");    // byte 32 -> U+0120
  EXPECT_EQ(bytes_to_printable("\n"), "Ċ");   // byte 10 -> U+010A
  EXPECT_EQ(bytes_to_printable("a!"), "a!");
  for (int b = 0; b < 256; ++b) {
    std::string back;
    ASSERT_TRUE(printable_to_bytes(bytes_to_printable(std::string(1, static_cast<char>(b))), &back));
    ASSERT_EQ(back, std::string(1, static_cast<char>(b)));
  }
}

// ---- training -------------------------------------------------------------------------

TEST(Train, MergesAndVocabMatchPythonReference) {
  const BpeModel& model = fixture_model();
  std::istringstream merges(read_all(fixture_path("bpe/merges_ref.txt")));
  std::string left, right;
  size_t rank = 0;
  while (merges >> left >> right) {
    ASSERT_LT(rank, model.merges.size());
    EXPECT_EQ(model.vocab[model.merges[rank].first], unhex(left)) << "merge " << rank;
    EXPECT_EQ(model.vocab[model.merges[rank].second], unhex(right)) << "merge " << rank;
    ++rank;
  }
  EXPECT_EQ(rank, 142u);
  EXPECT_EQ(model.merges.size(), rank);
  std::istringstream vocab(read_all(fixture_path("bpe/vocab_ref.txt")));
  size_t id = 0;
  std::string hex;
  for (size_t i; vocab >> i >> hex; ++id) EXPECT_EQ(model.vocab.at(i), unhex(hex)) << "id " << i;
  EXPECT_EQ(id, 400u);
  EXPECT_EQ(model.vocab.size(), 400u);
}

TEST(Train, TieGoesToGreaterPair) {
  // Pre-tokens "ab", " ab", " cd" x2: (a, b), (' ', c) and (c, d) all count 2,
  // and (c, d) is the greatest. Then (a, b) and (' ', cd) tie; "a" > " ".
  const BpeModel model = train_bpe("ab ab cd cd", 258, {});
  ASSERT_EQ(model.merges.size(), 2u);
  EXPECT_EQ(model.vocab[256], "cd");
  EXPECT_EQ(model.vocab[257], "ab");
}

TEST(Train, SpecialTokensAreNeverMergedAcross) {
  const BpeModel model = train_bpe("xy<|s|>xy<|s|>xy", 300, {"<|s|>"});
  for (const std::string& tok : model.vocab) {
    if (tok == "<|s|>" || tok.size() == 1) continue;
    EXPECT_EQ(tok.find('<'), std::string::npos) << tok;
  }
  EXPECT_EQ(model.vocab[256], "<|s|>");
  EXPECT_EQ(model.vocab[257], "xy");
  EXPECT_EQ(model.vocab.size(), 258u);  // nothing else to merge: stops early
}

TEST(Train, BadInput) {
  EXPECT_RG_ERROR(train_bpe("", 300, {}), "train_bpe", "empty");
  EXPECT_RG_ERROR(train_bpe("abc", 257, {"<a>", "<b>"}), "train_bpe", "257", "258");
  EXPECT_RG_ERROR(train_bpe("abc", 300, {"bad\xff"}), "train_bpe", "UTF-8", "byte offset 3");
  EXPECT_RG_ERROR(train_bpe("abc", 300, {""}), "train_bpe", "empty");
  EXPECT_RG_ERROR(train_bpe("abc", 300, {"<"}), "train_bpe", "'<'", "single byte", "token 60");
  EXPECT_RG_ERROR(train_bpe("abc", 300, {"<s>", "<s>"}), "train_bpe", "'<s>'", "twice");
  // Invalid UTF-8 in the corpus is just bytes.
  const BpeModel model = train_bpe("\xff\xfe\xff\xfe ok", 258, {});
  EXPECT_EQ(model.vocab[256], "\xff\xfe");
}

// ---- encode / decode ------------------------------------------------------------------

TEST(Encode, MatchesPythonReference) {
  Tokenizer tok(fixture_model());
  for (const char* name : {"corpus", "sample"}) {
    const std::string text = read_all(fixture_path(std::string("bpe/") + name + ".txt"));
    const auto expected = read_ids(fixture_path(std::string("bpe/") + name + "_ids.txt"));
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(tok.encode(text), expected) << name;
    EXPECT_EQ(tok.encode(text), expected) << name << " (a second call, its own cache)";
    EXPECT_EQ(tok.decode(expected), text);
  }
}

// encode, encode_linear and encode_stream from eight threads at once on one
// Tokenizer: each thread's texts are new words (so a cache shared between the
// threads would be written, rehashed and cleared concurrently), and the ids
// must equal those of a second Tokenizer that encoded them one by one.
TEST(Encode, SeveralThreadsAtOnceGiveTheSequentialIds) {
  constexpr int kThreads = 8, kTexts = 40;
  std::vector<std::vector<std::string>> texts(kThreads);
  std::mt19937 rng(22);
  for (auto& list : texts) {
    for (int t = 0; t < kTexts; ++t) {
      std::string text;
      for (int w = 0; w < 60; ++w) {
        text += rng() % 9 == 0 ? "<|endoftext|>" : " ";
        for (int c = 2 + static_cast<int>(rng() % 7); c > 0; --c) text += static_cast<char>('a' + rng() % 26);
      }
      list.push_back(text);
    }
  }
  const Tokenizer sequential(fixture_model());
  std::vector<std::vector<std::vector<int32_t>>> want(kThreads);
  for (int i = 0; i < kThreads; ++i)
    for (const std::string& text : texts[i]) want[i].push_back(sequential.encode(text));

  const Tokenizer shared(fixture_model());
  std::vector<std::vector<std::vector<int32_t>>> got(kThreads), got_linear(kThreads), got_stream(kThreads);
  std::atomic<int> waiting{kThreads};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (--waiting; waiting.load() > 0;) std::this_thread::yield();  // start together
      for (const std::string& text : texts[i]) {
        got[i].push_back(shared.encode(text));
        got_linear[i].push_back(shared.encode_linear(text));
        std::istringstream in(text);
        std::vector<int32_t> ids;
        shared.encode_stream(in, [&](const std::vector<int32_t>& part) { ids.insert(ids.end(), part.begin(), part.end()); },
                             /*chunk_bytes=*/64, /*max_buffer_bytes=*/1 << 20);
        got_stream[i].push_back(ids);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    for (int t = 0; t < kTexts; ++t) {
      ASSERT_EQ(got[i][t], want[i][t]) << "encode, thread " << i << " text " << t;
      ASSERT_EQ(got_linear[i][t], want[i][t]) << "encode_linear, thread " << i << " text " << t;
      ASSERT_EQ(got_stream[i][t], want[i][t]) << "encode_stream, thread " << i << " text " << t;
    }
  }
}

TEST(Encode, RoundTripRandomUnicode) {
  Tokenizer tok(fixture_model());
  // Code points from several scripts, emoji with joiners, combining marks, spaces.
  const std::vector<char32_t> alphabet = {'a', 'e', 't', ' ', ' ', '\n', '\t', '\'', 's', '1', '.', '!', 0xE9,
                                          0x301, 0x308, 0x4E2D, 0x6587, 0x3042, 0x1F642, 0x1F680, 0x200D,
                                          0x1F1EB, 0x3A9, 0x416, 0xA0, 0x3000, 0x627, '<', '|'};
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    std::string s;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) {
      if (rng() % 20 == 0) s += "<|endoftext|>";
      append_utf8(s, alphabet[rng() % alphabet.size()]);
    }
    ASSERT_EQ(tok.decode(tok.encode(s)), s) << "trial " << trial;
  }
}

TEST(Encode, RoundTripInvalidBytes) {
  Tokenizer tok(fixture_model());
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    std::string s;
    const int len = static_cast<int>(rng() % 30);
    for (int i = 0; i < len; ++i) s += static_cast<char>(rng() % 256);
    const auto ids = tok.encode(s);
    ASSERT_EQ(tok.decode_bytes(ids), s);
    ASSERT_EQ(tok.decode(ids), replace_invalid_utf8(s));
  }
}

TEST(Encode, OverlappingSpecialsLongestFirst) {
  BpeModel model = train_bpe("hello world", 260, {"<|a|>", "<|a|><|a|>"});
  Tokenizer tok(model);
  EXPECT_EQ(tok.encode("<|a|><|a|><|a|>"), (std::vector<int32_t>{257, 256}));
}

// split_at_specials_linear gives split_at_specials' pieces, on random text
// made of specials that overlap (one is a prefix of another, one crosses the
// end of another) and the bytes they are made of.
TEST(Pretokenize, LinearSplitEqualsSplitAtSpecials) {
  const std::vector<std::string> specials = {"<|a|>", "<|b|>", "<|a|><|a|>", "a|><", "xx"};
  const std::vector<std::string> parts = {"<|a|>", "<|b|>", "<", "|", "a", "b", ">", "x", " ", "<|a|><|a|>"};
  std::mt19937 rng(20);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) text += parts[rng() % parts.size()];
    const auto want = split_at_specials(text, specials), got = split_at_specials_linear(text, specials);
    ASSERT_EQ(got.size(), want.size()) << text;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].text, want[i].text) << text;
      ASSERT_EQ(got[i].special, want[i].special) << text;
    }
  }
  EXPECT_TRUE(split_at_specials_linear("", specials).empty());
  ASSERT_EQ(split_at_specials_linear("abc", {}).size(), 1u);
}

double seconds_of(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Issue 20: with specials <|a|> and <|b|>, a 1 MB run of <|a|> took 177 s to
// encode (split_at_specials searched <|b|> through the rest of the text after
// every <|a|>). Now linear: the bound below is some 1000 times what a Release
// build takes (about 0.02 s on 2 cores), so it holds under sanitizers too, and
// a quadratic algorithm (minutes) misses it by far. The ids are checked too.
TEST(Encode, AMegabyteRunOfSpecialsEncodesInLinearTime) {
  const Tokenizer tok(train_bpe("hello world <|a|> hello <|b|> world", 300, {"<|a|>", "<|b|>"}));
  const int32_t a = 256, b = 257;
  ASSERT_EQ(tok.model().vocab[a], "<|a|>");
  std::string run;
  for (int i = 0; i < 200000; ++i) run += "<|a|>";
  ASSERT_EQ(run.size(), 1000000u);
  std::vector<int32_t> ids;
  const double whole = seconds_of([&] { ids = tok.encode_linear(run); });
  ASSERT_EQ(ids.size(), 200000u);
  EXPECT_TRUE(std::all_of(ids.begin(), ids.end(), [&](int32_t id) { return id == a; }));
  std::vector<int32_t> streamed;
  const double stream = seconds_of([&] {
    std::istringstream in(run);
    tok.encode_stream(in, [&](const std::vector<int32_t>& part) { streamed.insert(streamed.end(), part.begin(), part.end()); },
                      1 << 16);
  });
  EXPECT_EQ(streamed, ids);
  // Specials and text mixed, no space anywhere: the same ids as encode() of
  // small pieces (checked on a prefix), in bounded time for the whole MB.
  std::string mixed;
  long bs = 0;
  for (int i = 0; mixed.size() < 1000000; ++i) {
    bs += i % 3 == 0;
    mixed += i % 3 == 0 ? "<|b|>hello" : i % 3 == 1 ? "<|a|>" : "wor<|a|ld";
  }
  std::vector<int32_t> mixed_ids;
  const double mix = seconds_of([&] { mixed_ids = tok.encode_linear(mixed); });
  EXPECT_EQ(std::count(mixed_ids.begin(), mixed_ids.end(), b), bs);
  const std::string prefix = mixed.substr(0, 2400);
  const std::vector<int32_t> small = tok.encode(prefix);
  EXPECT_EQ(tok.encode_linear(prefix), small);
  std::printf("[ encode ] 1 MB run of <|a|>: encode_linear %.3f s, encode_stream %.3f s; 1 MB mixed: %.3f s\n", whole,
              stream, mix);
  EXPECT_LT(whole, 20.0);
  EXPECT_LT(stream, 20.0);
  EXPECT_LT(mix, 20.0);
}

TEST(Decode, IdOutOfRange) {
  Tokenizer tok(fixture_model());
  EXPECT_RG_ERROR(tok.decode({1, 400}), "decode", "400", "position 1", "[0, 400)");
  EXPECT_RG_ERROR(tok.decode({-1}), "decode", "-1");
}

TEST(Encode, StreamingEqualsWhole) {
  Tokenizer tok(fixture_model());
  std::string text;
  for (int i = 0; i < 5; ++i) text += read_all(fixture_path("bpe/corpus.txt")) + read_all(fixture_path("bpe/sample.txt"));
  const auto whole = tok.encode(text);
  for (size_t chunk : {1, 7, 13, 64, 1000, 100000}) {
    std::istringstream in(text);
    std::vector<int32_t> streamed;
    tok.encode_stream(in, [&](const std::vector<int32_t>& ids) { streamed.insert(streamed.end(), ids.begin(), ids.end()); },
                      chunk);
    ASSERT_EQ(streamed, whole) << "chunk " << chunk;
  }
}

// Random text over letters of several scripts, Unicode spaces (U+00A0,
// U+3000, U+0085), invalid bytes, digits and punctuation, next to ' ' and '\n'.
std::string random_mixed_text(std::mt19937& rng, int chars) {
  const std::vector<char32_t> alphabet = {'a', 'Z', ' ', ' ', ' ', '\n', '\n', '\t', '\'', 's', '7', '.', 0xE9, 0x4E2D,
                                          0x3042, 0x1F642, 0x416, 0xA0, 0x3000, 0x85, 0x2028, 0x627, 0x301};
  std::string s;
  for (int i = 0; i < chars; ++i) {
    if (rng() % 50 == 0) s += static_cast<char>(0x80 + rng() % 0x40);  // a stray continuation byte
    if (rng() % 60 == 0) s += static_cast<char>(0xE4);                  // a truncated lead byte
    append_utf8(s, alphabet[rng() % alphabet.size()]);
  }
  return s;
}

TEST(Decode, BlockByBlockReplacesInvalidUtf8AsTheWholeDoes) {
  // What `tokenize decode` does: decode a block, keep its incomplete last
  // character for the next block, replace the rest.
  std::mt19937 rng(5);
  const std::vector<std::string> pieces = {"a", " ", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x99\x82", "\xe4\xb8",
                                           "\xf0\x9f", "\x80", "\xff", "\xe0\x80", "\xed\xa0\x80", "\xf4\x90"};
  for (int trial = 0; trial < 500; ++trial) {
    std::string bytes;
    for (int i = 0, n = static_cast<int>(rng() % 30); i < n; ++i) bytes += pieces[rng() % pieces.size()];
    std::string out, pending;
    for (size_t at = 0; at < bytes.size();) {
      const size_t len = 1 + rng() % 5;
      pending += bytes.substr(at, len);
      at += len;
      const size_t keep = incomplete_utf8_tail(pending);
      out += replace_invalid_utf8(std::string_view(pending).substr(0, pending.size() - keep));
      pending.erase(0, pending.size() - keep);
    }
    out += replace_invalid_utf8(pending);
    ASSERT_EQ(out, replace_invalid_utf8(bytes)) << "trial " << trial;
  }
  EXPECT_EQ(incomplete_utf8_tail("ab\xe4\xb8"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("ab\xe0\x80"), 0u) << "E0 80 can never be completed";
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x99"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("\xc3\xa9"), 0u) << "a complete character";
}

TEST(Encode, ASafeCutSplitsNoPreToken) {
  std::mt19937 rng(7);
  int cuts = 0, non_ascii_cuts = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = random_mixed_text(rng, 60);
    const std::vector<std::string> whole = pretokens(text);
    for (size_t pos = 0; pos <= text.size(); ++pos) {
      if (!is_safe_cut(text, pos)) continue;
      ++cuts;
      non_ascii_cuts += static_cast<unsigned char>(text[pos - 1]) >= 0x80;
      std::vector<std::string> parts = pretokens(std::string_view(text).substr(0, pos));
      const std::vector<std::string> right = pretokens(std::string_view(text).substr(pos));
      parts.insert(parts.end(), right.begin(), right.end());
      ASSERT_EQ(parts, whole) << "trial " << trial << ": a cut at byte " << pos << " changes the pre-tokens";
    }
  }
  // The rule finds cuts after non-ASCII characters too (text in other scripts
  // streams in bounded memory), but never after a Unicode space.
  EXPECT_GT(cuts, 1000);
  EXPECT_GT(non_ascii_cuts, 200);
  EXPECT_FALSE(is_safe_cut("a\u00a0 b", 3)) << "U+00A0 is \\s: the space run goes on";
  EXPECT_FALSE(is_safe_cut("a\u3000\nb", 4));
}

TEST(Encode, StreamingEqualsWholeOnTextInAnyScript) {
  Tokenizer tok(fixture_model());
  std::mt19937 rng(11);
  const std::string text = random_mixed_text(rng, 20000);
  const auto whole = tok.encode(text);
  for (size_t chunk : {1, 5, 64, 4096}) {
    std::istringstream in(text);
    std::vector<int32_t> streamed;
    size_t pieces = 0;
    tok.encode_stream(in, [&](const std::vector<int32_t>& ids) {
      streamed.insert(streamed.end(), ids.begin(), ids.end());
      ++pieces;
    }, chunk, 1 << 20);
    ASSERT_EQ(streamed, whole) << "chunk " << chunk;
    if (chunk < 4096) {
      EXPECT_GT(pieces, 20u) << "chunk " << chunk << ": the text was held whole";
    }
  }
}

TEST(Encode, StreamingKeepsMemoryBoundedOnARunWithNowhereToCut) {
  Tokenizer tok(fixture_model());
  std::string run;  // 100 KB of letters and no space: one pre-token
  for (int i = 0; i < 100000; ++i) run += static_cast<char>('a' + i % 26);
  const std::string text = run + " the end\n" + run;
  std::istringstream in(text);
  std::vector<int32_t> streamed;
  size_t largest_piece = 0;
  tok.encode_stream(in, [&](const std::vector<int32_t>& ids) {
    streamed.insert(streamed.end(), ids.begin(), ids.end());
    largest_piece = std::max(largest_piece, tok.decode_bytes(ids).size());
  }, /*chunk_bytes=*/1024, /*max_buffer_bytes=*/8192);
  EXPECT_LE(largest_piece, 8192u + 1024u) << "the buffer grew past its limit";
  EXPECT_EQ(tok.decode_bytes(streamed), text) << "cutting a long run still round-trips";
  EXPECT_RG_ERROR(tok.encode_stream(in, [](const std::vector<int32_t>&) {}, 1024, 100), "encode_stream", "100",
                  "1024");
}

// ---- the heap form of encode_pretoken (tokenizer/fast/encode_heap.h) ---------------------

#if ROPEGRAD_HAS_EncodeHeap
namespace {

// `words` random words of 1 to 30 letters from the first `alphabet` of a-z,
// one per line (each line one pre-token), from rng.
std::string random_words(std::mt19937& rng, int alphabet, int words) {
  std::string out;
  for (int i = 0; i < words; ++i) {
    const int len = 1 + static_cast<int>(rng() % 30);
    for (int j = 0; j < len; ++j) out += static_cast<char>('a' + rng() % alphabet);
    out += '\n';
  }
  return out;
}

// The model with its merges' ranks permuted by rng: still a valid table (each
// merge makes a token of the vocabulary), but now a merge can use a token that
// a merge of higher rank makes, so merging at rank r can form a pair of lower
// rank, which the plain form merges only after its sweep of r.
BpeModel shuffled_ranks(BpeModel model, std::mt19937& rng) {
  std::shuffle(model.merges.begin(), model.merges.end(), rng);
  return model;
}

// Pre-tokens of every kind: each length 1..40 and random lengths up to 2000
// over the alphabet, runs of one letter ("aaaa...") and of short periods
// ("abab...", "aab..."), whose pairs tie in rank at every position.
std::vector<std::string> test_pretokens(std::mt19937& rng, int alphabet) {
  std::vector<std::string> out;
  auto random_string = [&](size_t len) {
    std::string s(len, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % alphabet);
    return s;
  };
  for (size_t len = 1; len <= 40; ++len) out.push_back(random_string(len));
  for (int i = 0; i < 6; ++i) out.push_back(random_string(41 + rng() % 1960));
  out.push_back(random_string(2000));
  for (size_t len : {2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 64, 65, 255, 1000, 2000}) {
    out.push_back(std::string(len, 'a'));
    std::string ab, aab;
    for (size_t i = 0; i < len; ++i) ab += "ab"[i % 2], aab += "aab"[i % 3];
    out.push_back(ab);
    out.push_back(aab);
  }
  return out;
}

// encode_pretoken_heap(p) against the plain form (encode_pretoken with fast
// forms off), id for id. Returns how many entries waited for a sweep's end.
int64_t expect_heap_equals_plain(const Tokenizer& tok, const std::vector<std::string>& pieces, const std::string& what) {
  const FastFormsScope off(false);
  int64_t deferred = 0;
  for (const std::string& p : pieces) {
    tok::fast::HeapEncodeWork work;
    const std::vector<int32_t> heap = tok.encode_pretoken_heap(p, &work);
    const std::vector<int32_t> plain = tok.encode_pretoken(p);
    EXPECT_EQ(heap, plain) << what << ", a pre-token of " << p.size() << " bytes: " << quote_bytes(p.substr(0, 60));
    EXPECT_EQ(work.merges, static_cast<int64_t>(p.size() - heap.size())) << what;
    deferred += work.deferred;
  }
  return deferred;
}

}  // namespace

// Random corpora of words over 2, 3, 5 and 26 letters, trained with
// train_bpe to several sizes (small alphabets and many merges make long
// tokens such as "aaaaaaaa"), each table also with its ranks shuffled; the
// heap form equals the plain form on pre-tokens of 1 to 2000 bytes.
TEST(EncodeHeap, EqualsThePlainFormOnRandomPreTokensAndMergeTables) {
  std::mt19937 rng(19);
  int tables = 0;
  int64_t deferred = 0;
  for (int alphabet : {2, 3, 5, 26}) {
    const std::string corpus = random_words(rng, alphabet, 3000);
    for (int64_t vocab : {270, 400, 1200}) {
      const BpeModel trained = train_bpe(corpus, vocab, {});
      const std::vector<std::string> pieces = test_pretokens(rng, alphabet);
      const std::string what = std::to_string(alphabet) + " letters, vocab " + std::to_string(vocab);
      EXPECT_EQ(expect_heap_equals_plain(Tokenizer(trained), pieces, what + ", trained"), 0)
          << "a trained table never forms a pair of lower rank than the merge that formed it";
      deferred += expect_heap_equals_plain(Tokenizer(shuffled_ranks(trained, rng)), pieces, what + ", shuffled ranks");
      tables += 2;
    }
  }
  EXPECT_EQ(tables, 24);
  EXPECT_GT(deferred, 0) << "the shuffled tables never exercised the wait for the end of a sweep";
}

// The tokenizer of tests/fixtures/bpe (the Python reference's table): every
// pre-token of the corpus and the sample, the whole corpus with its spaces and
// newlines removed cut into long pre-tokens, and random bytes.
TEST(EncodeHeap, EqualsThePlainFormOnTheFixtureTokenizer) {
  const Tokenizer tok(fixture_model());
  std::vector<std::string> pieces;
  std::string squeezed;
  for (const char* name : {"corpus", "sample"}) {
    const std::string text = read_all(fixture_path(std::string("bpe/") + name + ".txt"));
    for (const std::string& p : pretokens(text)) pieces.push_back(p);
    for (char c : text)
      if (c != ' ' && c != '\n') squeezed += c;
  }
  for (size_t at = 0, len = 1; at < squeezed.size() && len <= 2000; at += len, len = len * 3 / 2 + 1)
    pieces.push_back(squeezed.substr(at, len));
  std::mt19937 rng(20);
  for (size_t len : {1, 2, 3, 10, 100, 1000, 2000}) {
    std::string bytes(len, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    pieces.push_back(bytes);
  }
  expect_heap_equals_plain(tok, pieces, "the fixture tokenizer");
  // And through encode: the squeezed corpus is one long pre-token per line.
  const FastFormsScope on(true);
  const int64_t runs = fast_form_runs(FastForm::EncodeHeap);
  const std::vector<int32_t> fast = tok.encode(squeezed.substr(0, 20000));
  EXPECT_GT(fast_form_runs(FastForm::EncodeHeap), runs);
  const FastFormsScope off(false);
  EXPECT_EQ(fast, tok.encode(squeezed.substr(0, 20000)));
}

// A table where merging forms a pair of lower rank: ranks 0 (aa, a) and
// 1 (a, a). The plain form merges every (a, a) of "aaaaa" first (aa aa a),
// then (aa, a): aa aaa. Merging (aa, a) as soon as it forms would give aaa aa.
// Both merges of (a, a) form an (aa, a), and both wait.
TEST(EncodeHeap, APairOfLowerRankWaitsForTheSweepThatFormedIt) {
  BpeModel model;
  for (int b = 0; b < 256; ++b) model.vocab.push_back(std::string(1, static_cast<char>(b)));
  model.vocab.insert(model.vocab.end(), {"aa", "aaa"});
  model.merges = {{256, 'a'}, {'a', 'a'}};
  const Tokenizer tok(model);
  tok::fast::HeapEncodeWork work;
  EXPECT_EQ(tok.encode_pretoken_heap("aaaaa", &work), (std::vector<int32_t>{256, 257}));
  EXPECT_EQ(work.deferred, 2);
  const FastFormsScope off(false);
  EXPECT_EQ(tok.encode_pretoken("aaaaa"), (std::vector<int32_t>{256, 257}));
}

// Not a timing: the work of the heap form on 1 MB of letters that is one
// pre-token, counted. n - 1 initial pairs and two new pairs per merge (at most
// n - 1 merges): at most 3n lookups and pushes (so pops), and a push or a pop
// makes at most 2 log2(3n) comparisons in the heap, so O(n log n) in all.
// The plain form makes about n lookups per merge rank it applies (here
// hundreds of ranks).
TEST(EncodeHeap, WorkOnAMegabytePreTokenIsWithinNLogN) {
  std::mt19937 rng(21);
  const Tokenizer tok(train_bpe(random_words(rng, 26, 20000), 2000, {}));
  const size_t n = 1000000;
  std::string text(n, 'a');
  for (char& c : text) c = static_cast<char>('a' + rng() % 26);
  tok::fast::HeapEncodeWork work;
  const std::vector<int32_t> ids = tok.encode_pretoken_heap(text, &work);
  const double nd = static_cast<double>(n), log_n = std::log2(nd);
  std::printf("[ encode ] heap form, 1 MB pre-token, %zu merges: %lld lookups, %lld pushes, %lld pops, %lld "
              "comparisons (%.2f n log2 n), %lld merges\n",
              tok.model().merges.size(), static_cast<long long>(work.pair_lookups),
              static_cast<long long>(work.heap_pushes), static_cast<long long>(work.heap_pops),
              static_cast<long long>(work.heap_comparisons), work.heap_comparisons / (nd * log_n),
              static_cast<long long>(work.merges));
  EXPECT_EQ(work.merges, static_cast<int64_t>(n - ids.size()));
  EXPECT_GT(work.merges, static_cast<int64_t>(n / 4)) << "the table should merge much of the text";
  EXPECT_LE(work.pair_lookups, static_cast<int64_t>(3 * n));
  EXPECT_LE(work.heap_pushes, static_cast<int64_t>(3 * n));
  EXPECT_LE(work.heap_pops, work.heap_pushes);
  EXPECT_LE(static_cast<double>(work.heap_comparisons),
            2.0 * static_cast<double>(work.heap_pushes + work.heap_pops) * std::log2(3 * nd));
  EXPECT_LE(static_cast<double>(work.heap_comparisons), 12.0 * nd * log_n);
  // The same ids as the plain form on a prefix (all of it would take seconds).
  const std::string prefix = text.substr(0, 10000);
  expect_heap_equals_plain(tok, {prefix}, "a 10 KB prefix");
}

// The dispatch (tokenizer/encode.cpp): a long pre-token takes the heap form
// when fast forms are on, never when off; a short one never does.
TEST(EncodeHeap, OnlyLongPreTokensTakeTheHeapFormAndOnlyWithFastFormsOn) {
  const Tokenizer tok(fixture_model());
  const std::string long_word(1000, 'e'), short_word = "the";
  auto runs_of = [&](const std::string& text, bool on) {
    const FastFormsScope scope(on);
    const int64_t before = fast_form_runs(FastForm::EncodeHeap);
    (void)tok.encode(text);
    return fast_form_runs(FastForm::EncodeHeap) - before;
  };
  EXPECT_EQ(runs_of(long_word, true), 1);
  EXPECT_EQ(runs_of(long_word, false), 0);
  EXPECT_EQ(runs_of(short_word, true), 0);
}
#endif

// The heap form is a fast form of ex19-encode: only a learner's workspace
// that stubs ex19-encode is without it (its tests above are then left out).
TEST(EncodeHeap, PresentUnlessThisWorkspaceStubbedEncode) {
#if ROPEGRAD_HAS_EncodeHeap
  SUCCEED();
#else
  std::ifstream stubbed(std::string(ROPEGRAD_FIXTURES) + "/../../.course/stubbed");
  std::string all((std::istreambuf_iterator<char>(stubbed)), std::istreambuf_iterator<char>());
  if (all.find("ex19-encode\n") != std::string::npos) GTEST_SKIP() << "a workspace that stubs ex19-encode";
  ADD_FAILURE() << "tokenizer/fast/encode_heap.h is missing from the reference tree";
#endif
}

// ---- files ------------------------------------------------------------------------------

TEST(Files, SaveLoadRoundTrip) {
  const std::string dir = temp_dir("roundtrip");
  save_tokenizer(fixture_model(), dir);
  const BpeModel loaded = load_tokenizer(dir);
  EXPECT_EQ(loaded.vocab, fixture_model().vocab);
  EXPECT_EQ(loaded.merges, fixture_model().merges);
  EXPECT_EQ(loaded.specials, fixture_model().specials);
  // GPT-2 style: the space byte is written as 'Ġ'.
  const std::string merges = read_all(dir + "/merges.txt");
  EXPECT_EQ(merges.rfind("#version: 0.2\n", 0), 0u);
  EXPECT_NE(merges.find("Ġ t\n"), std::string::npos);
  EXPECT_NE(read_all(dir + "/vocab.json").find("\"Ġ\": 32,"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Files, CorruptFilesNameFileAndPlace) {
  const std::string dir = temp_dir("corrupt");
  save_tokenizer(fixture_model(), dir);
  const std::string vocab = read_all(dir + "/vocab.json");
  const std::string merges = read_all(dir + "/merges.txt");

  write_file(dir + "/vocab.json", vocab.substr(0, vocab.size() / 2));  // truncated
  EXPECT_RG_ERROR(load_tokenizer(dir), "load_tokenizer", "vocab.json", "line");
  write_file(dir + "/vocab.json", "{\n  \"a\": 0,\n  \"b\" 1\n}");
  EXPECT_RG_ERROR(load_tokenizer(dir), "vocab.json line 3 column 7", "expected ':'");
  write_file(dir + "/vocab.json", "{\"a\": 5}");
  EXPECT_RG_ERROR(load_tokenizer(dir), "vocab.json", "id 5");
  write_file(dir + "/vocab.json", "{\"a\": 0, \"b\": 0}");
  EXPECT_RG_ERROR(load_tokenizer(dir), "vocab.json", "id 0 is given twice");

  write_file(dir + "/vocab.json", vocab);
  write_file(dir + "/merges.txt", merges + "Ġ zzzq\n");
  EXPECT_RG_ERROR(load_tokenizer(dir), "merges.txt line 144", "not in");
  write_file(dir + "/merges.txt", merges + "onlyone\n");
  EXPECT_RG_ERROR(load_tokenizer(dir), "merges.txt line 144", "two tokens");
  write_file(dir + "/merges.txt", "#version: 0.2\nh \x01\n");
  EXPECT_RG_ERROR(load_tokenizer(dir), "merges.txt line 2", "alphabet");
  std::filesystem::remove_all(dir);
  EXPECT_RG_ERROR(load_tokenizer(dir), "load_tokenizer", "cannot open");
}

// Issue 20: a NUL in a vocab.json token or a binary merges.txt cut the message
// off at the NUL, a CRLF merges.txt printed the raw CR, '#version: 99.0' was
// read as 0.2, and a missing byte's token did not name the file.
TEST(Files, HostileFilesAreQuotedWithTheirFileAndLine) {
  const std::string dir = temp_dir("hostile");
  save_tokenizer(fixture_model(), dir);
  const std::string vocab = read_all(dir + "/vocab.json");
  const std::string merges = read_all(dir + "/merges.txt");
  const auto expect_printable = [](const std::string& msg) {
    for (unsigned char c : msg) EXPECT_TRUE(c == '\n' || c >= 0x20) << "raw byte " << int(c) << " in: " << msg;
  };

  write_file(dir + "/vocab.json", std::string("{\n  \"a\": 0,\n  \"b\0c\": 1\n}", 24));
  std::string msg = error_of([&] { load_tokenizer(dir); });
  EXPECT_THAT(msg, ::testing::HasSubstr("vocab.json line 3 column 5: raw control byte '\\x00' in the string 'b\\x00'"));
  expect_printable(msg);
  write_file(dir + "/vocab.json", "{\n  \"a\": 0,\n  \"\\u0000x\": 1\n}");  // an escaped NUL: not GPT-2's alphabet
  msg = error_of([&] { load_tokenizer(dir); });
  EXPECT_THAT(msg, ::testing::HasSubstr("vocab.json line 3: '\\x00x' has a character outside"));
  expect_printable(msg);

  write_file(dir + "/vocab.json", vocab);
  write_file(dir + "/merges.txt", std::string("#version: 0.2\n\x7f\x45\x4c\x46\x02\x01\x01\0\0\xff\xfe\r\n", 27));
  msg = error_of([&] { load_tokenizer(dir); });
  EXPECT_THAT(msg, ::testing::HasSubstr("merges.txt line 2: expected two tokens separated by one space, got "
                                        "'\\x7fELF\\x02\\x01\\x01\\x00\\x00\\xff\\xfe'"));
  expect_printable(msg);
  write_file(dir + "/merges.txt", "#version: 0.2\r\nh \x01\r\n");
  msg = error_of([&] { load_tokenizer(dir); });
  EXPECT_THAT(msg, ::testing::HasSubstr("merges.txt line 2: '\\x01' has a character outside"));
  expect_printable(msg);
  // CRLF line endings otherwise read as LF ones: the same model.
  std::string crlf;
  for (char c : merges) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write_file(dir + "/merges.txt", crlf);
  EXPECT_EQ(load_tokenizer(dir).merges, fixture_model().merges);

  for (const std::string version : {"#version: 99.0", "#version: 0.1", "#version:0.2", "#version: 0.2 "}) {
    write_file(dir + "/merges.txt", version + "\n" + merges.substr(merges.find('\n') + 1));
    EXPECT_RG_ERROR(load_tokenizer(dir), "load_tokenizer", "merges.txt line 1: unsupported '" + version + "'",
                    "only '#version: 0.2'");
  }
  write_file(dir + "/merges.txt", merges);

  // No token for 'q' (byte 113): its id goes to another token instead.
  std::string no_q = vocab;
  const size_t q = no_q.find("\"q\":");
  ASSERT_NE(q, std::string::npos);
  no_q.replace(q, 3, "\"qq\"");
  write_file(dir + "/vocab.json", no_q);
  write_file(dir + "/merges.txt", "#version: 0.2\n");
  EXPECT_RG_ERROR(load_tokenizer(dir), "load_tokenizer", dir + "/vocab.json: the vocabulary has no token for byte 113 ('q'");
  EXPECT_RG_ERROR(load_tokenizer(dir + "/vocab.json"), "load_tokenizer");  // a file given as the directory
  std::filesystem::remove_all(dir);
}

// quote_bytes, the one helper every such message uses.
TEST(Files, QuoteBytesShowsEveryByte) {
  EXPECT_EQ(quote_bytes("abc"), "'abc'");
  EXPECT_EQ(quote_bytes(std::string("a\0b\r\n\t\\\x7f\xff", 9)), "'a\\x00b\\r\\n\\t\\\\\\x7f\\xff'");
  EXPECT_EQ(quote_bytes("it's"), "\"it's\"");
  EXPECT_EQ(quote_bytes("\xc4\xa0x"), "'\xc4\xa0x'");  // valid UTF-8 stays (GPT-2's Ġ)
  EXPECT_EQ(quote_bytes("\xc4"), "'\\xc4'");           // a lone lead byte does not
  EXPECT_EQ(quote_bytes(std::string(200, 'a'), 4), "'aaaa'... (200 bytes)");
}

TEST(Files, ModelChecks) {
  BpeModel model = fixture_model();
  model.merges.push_back({1000, 1});
  EXPECT_RG_ERROR(Tokenizer{model}, "Tokenizer", "1000", "outside");
  model = fixture_model();
  model.merges.push_back({'q', 'z'});
  EXPECT_RG_ERROR(Tokenizer{model}, "Tokenizer", "not in the vocabulary");
  model = fixture_model();
  model.vocab[65] = "AA";
  EXPECT_RG_ERROR(Tokenizer{model}, "Tokenizer", "byte 65");
}

// CS336's Tokenizer.from_files: two paths (any names) and a list of special
// tokens; those absent from the vocabulary are added with the next ids.
TEST(Files, LoadFromTwoPathsAddsAbsentSpecialTokens) {
  const std::string dir = temp_dir("two_paths");
  save_tokenizer(fixture_model(), dir);
  std::filesystem::rename(dir + "/vocab.json", dir + "/my-vocab.json");
  std::filesystem::rename(dir + "/merges.txt", dir + "/my-merges.txt");
  const BpeModel model = load_tokenizer(dir + "/my-vocab.json", dir + "/my-merges.txt", {"<|endoftext|>", "<|new|>"});
  ASSERT_EQ(model.vocab.size(), fixture_model().vocab.size() + 1);
  EXPECT_EQ(model.vocab.back(), "<|new|>");
  EXPECT_EQ(model.vocab[256], "<|endoftext|>") << "a special token already in the vocabulary keeps its id";
  EXPECT_EQ(model.merges, fixture_model().merges);
  EXPECT_EQ(model.specials, (std::vector<std::string>{"<|endoftext|>", "<|new|>"}));
  const Tokenizer tok(model);
  EXPECT_EQ(tok.encode("a<|new|>b"), (std::vector<int32_t>{'a', 400, 'b'}));
  EXPECT_RG_ERROR(load_tokenizer(dir + "/my-vocab.json", dir + "/nope.txt", {}), "load_tokenizer", "nope.txt");
  EXPECT_RG_ERROR(load_tokenizer(dir + "/my-vocab.json", dir + "/my-merges.txt", {"<a>", "<a>"}), "load_tokenizer",
                  "'<a>'", "twice");
  std::filesystem::remove_all(dir);
}

// ---- token ids on disk ------------------------------------------------------------------

TEST(TokenIds, Uint16AndInt32FilesReadBackEverywhere) {
  const std::string dir = temp_dir("ids");
  const std::vector<int32_t> small = {0, 1, 255, 256, 65535, 7};
  const std::vector<int32_t> large = {0, 65536, 100000, 3};
  nn::save_token_ids(dir + "/small.npy", small);
  nn::save_token_ids(dir + "/large.npy", large);
  EXPECT_NE(read_all(dir + "/small.npy").find("'<u2'"), std::string::npos);
  EXPECT_NE(read_all(dir + "/large.npy").find("'<i4'"), std::string::npos);
  for (const auto& file : {std::pair{"small", small}, std::pair{"large", large}}) {
    const std::string name = file.first;  // plain variables: EXPECT_RG_ERROR's lambda captures them
    const auto& ids = file.second;
    nn::TokenMemmap map(dir + "/" + name + ".npy");
    ASSERT_EQ(map.size(), static_cast<int64_t>(ids.size()));
    const Tensor t = nn::load_npy(dir + "/" + name + ".npy");  // io/npy.cpp reads both as int64
    ASSERT_EQ(t.numel(), static_cast<int64_t>(ids.size()));
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(map.at(static_cast<int64_t>(i)), ids[i]);
      EXPECT_EQ(t.data_ptr<int64_t>()[i], ids[i]);
    }
    EXPECT_RG_ERROR(map.at(static_cast<int64_t>(ids.size())), "TokenMemmap", "outside");
  }
  std::filesystem::remove_all(dir);
}

TEST(TokenIds, AWriterFedInPiecesWritesTheSameFileAndOnlyWhenClosed) {
  const std::string dir = temp_dir("writer");
  std::vector<int32_t> all;
  {
    nn::TokenIdWriter writer(dir + "/pieces.npy", 70000);  // vocab above 65536: int32 ids
    for (int32_t piece = 0; piece < 5; ++piece) {
      std::vector<int32_t> ids(1000 + piece);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919 + piece) % 70000);
      writer.write(ids);
      all.insert(all.end(), ids.begin(), ids.end());
    }
    EXPECT_FALSE(std::filesystem::exists(dir + "/pieces.npy")) << "the file appears only when complete";
    EXPECT_EQ(writer.count(), static_cast<int64_t>(all.size()));
    writer.close();
  }
  const std::string bytes = read_all(dir + "/pieces.npy");
  EXPECT_EQ(bytes.size(), 128 + 4 * all.size());  // the fixed 128-byte header, then the ids
  EXPECT_NE(bytes.find("'<i4'"), std::string::npos);
  nn::TokenMemmap map(dir + "/pieces.npy");
  ASSERT_EQ(map.size(), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); i += 97) EXPECT_EQ(map.at(static_cast<int64_t>(i)), all[i]);
  // Nothing written yet, an empty file: a valid 0-long array.
  { nn::TokenIdWriter(dir + "/empty.npy", 10).close(); }
  EXPECT_EQ(nn::TokenMemmap(dir + "/empty.npy").size(), 0);
  std::filesystem::remove_all(dir);
}

TEST(TokenIds, AWriterThatFailsOrIsNotClosedLeavesNoFile) {
  const std::string dir = temp_dir("writerfail");
  {
    nn::TokenIdWriter writer(dir + "/bad.npy", 300);
    writer.write({1, 2, 3});
    EXPECT_RG_ERROR(writer.write({4, 300}), "TokenIdWriter", "bad.npy", "token id 300 at position 4", "[0, 300)");
  }  // destroyed without close(), as when encoding stops on an error or an exception
  // Nothing at all: neither bad.npy nor its temporary file (bad.npy.<pid>.<random>.tmp).
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_RG_ERROR(nn::TokenIdWriter(dir + "/no/such/dir/x.npy", 10), "TokenIdWriter", "cannot write");
  EXPECT_RG_ERROR(nn::TokenIdWriter(dir + "/x.npy", 0), "TokenIdWriter", "vocab_size");
  std::filesystem::remove_all(dir);
}

TEST(TokenIds, GetBatchSamplesWindowsFromTheMapping) {
  const std::string dir = temp_dir("batch");
  std::vector<int32_t> ids(1000);
  for (int32_t i = 0; i < 1000; ++i) ids[i] = i;  // id == position, so a window is a run
  nn::save_token_ids(dir + "/ids.npy", ids);
  nn::TokenMemmap map(dir + "/ids.npy");
  Generator gen(3);
  auto [x, y] = map.get_batch(5, 16, gen);
  ASSERT_EQ(x.shape(), (Shape{5, 16}));
  ASSERT_EQ(y.shape(), (Shape{5, 16}));
  for (int64_t b = 0; b < 5; ++b) {
    const int64_t start = x.at<int64_t>({b, 0});
    EXPECT_GE(start, 0);
    EXPECT_LE(start + 16, 999);
    for (int64_t t = 0; t < 16; ++t) {
      EXPECT_EQ(x.at<int64_t>({b, t}), start + t);
      EXPECT_EQ(y.at<int64_t>({b, t}), start + t + 1);
    }
  }
  EXPECT_RG_ERROR(map.get_batch(2, 1000, gen), "get_batch", "1000 ids", "1001");
  std::filesystem::remove_all(dir);
}

TEST(TokenIds, BadFilesAreRefused) {
  const std::string dir = temp_dir("badids");
  nn::save_token_ids(dir + "/ok.npy", {1, 2, 3, 4});
  const std::string ok = read_all(dir + "/ok.npy");
  write_file(dir + "/short.npy", ok.substr(0, ok.size() - 1));
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/short.npy"), "TokenMemmap", "short.npy", "4 ids", "7 data bytes");
  write_file(dir + "/magic.npy", "not a numpy file at all");
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/magic.npy"), "TokenMemmap", "bad magic");
  std::string f4 = ok;
  f4.replace(f4.find("<u2"), 3, "<f4");
  write_file(dir + "/f4.npy", f4);
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/f4.npy"), "TokenMemmap", "'<f4'");
  std::string two_d = ok;
  two_d.replace(two_d.find("(4,)"), 4, "(2,2)");
  write_file(dir + "/2d.npy", two_d);
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/2d.npy"), "TokenMemmap", "not 1-D");
  write_file(dir + "/tiny.npy", "\x93NUM");
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/tiny.npy"), "TokenMemmap", "too short");
  EXPECT_RG_ERROR(nn::TokenMemmap(dir + "/missing.npy"), "TokenMemmap", "cannot open");
  std::filesystem::remove_all(dir);
}

// ---- the CLI and the text task on BPE ids ---------------------------------------------------

int tokenize(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ropegrad::tasks::run_tokenize(static_cast<int>(argv.size()), argv.data());
}

TEST(TokenizeCli, TrainEncodeDecodeRoundTrip) {
  const std::string dir = temp_dir("cli");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "400", "--special", "<|endoftext|>", "--special",
                      "<|pad|>", "--out", dir + "/tok"}),
            0);
  EXPECT_EQ(load_tokenizer(dir + "/tok").merges, fixture_model().merges);
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/tok", "--input", corpus, "--out", dir + "/ids.npy"}), 0);
  nn::TokenMemmap ids(dir + "/ids.npy");
  const auto expected = read_ids(fixture_path("bpe/corpus_ids.txt"));
  ASSERT_EQ(ids.size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids.at(i), expected[i]) << i;
  ASSERT_EQ(tokenize({"decode", "--tokenizer", dir + "/tok", "--input", dir + "/ids.npy", "--out", dir + "/back.txt"}), 0);
  EXPECT_EQ(read_all(dir + "/back.txt"), read_all(corpus));
  std::filesystem::remove_all(dir);
}

// The files of a directory, sorted.
std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Issue 20: two encodes into one --out both wrote OUT.tmp and corrupted it.
// Now the output is locked as `train` locks --out: with the lock held (here,
// by this process: deterministic), a second writer is refused at once, naming
// the holder, and writes nothing; once released it goes ahead and the lock
// file goes with it. The same for decode and for tokenize train's directory.
TEST(TokenizeCli, ASecondWriterOfTheSameOutputIsRefusedNamingTheHolder) {
  const std::string dir = temp_dir("onewriter");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/ids.npy"}), 0);
  const std::string pid = "pid " + std::to_string(::getpid());
  const std::vector<std::string> before = listing(dir);
  {
    const tasks::OutputLock held(dir + "/ids2.npy", "test");
    EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/ids2.npy"}),
                    "tokenize", "ids2.npy' is being written by another process", pid);
  }
  {
    const tasks::OutputLock held(dir + "/back.txt", "test");
    EXPECT_RG_ERROR(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/ids.npy", "--out", dir + "/back.txt"}),
                    "tokenize", "back.txt' is being written by another process", pid);
  }
  {
    const tasks::OutputLock held(dir + "/t2", "test", {}, /*directory=*/true);
    EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t2"}), "tokenize",
                    "t2' is being written by another process", pid);
  }
  EXPECT_EQ(listing(dir), before) << "the refused writers left nothing, and the released locks are gone";
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/ids2.npy"}), 0);
  ASSERT_EQ(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/ids2.npy", "--out", dir + "/back.txt"}), 0);
  EXPECT_EQ(read_all(dir + "/back.txt"), read_all(corpus));
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"back.txt", "ids.npy", "ids2.npy", "t"}));
  std::filesystem::remove_all(dir);
}

// A killed encode or decode left OUT.tmp (up to 15 MB) behind for good. Now
// its temporary file names its writer (OUT.<pid>.<random>.tmp), and the next
// writer of OUT removes those whose process is gone, and only those.
TEST(TokenizeCli, TemporaryFilesOfAKilledWriterAreRemovedByTheNext) {
  const std::string dir = temp_dir("stale");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  const pid_t child = ::fork();  // a pid that is surely gone: a child that has exited and been reaped
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string dead = std::to_string(child), alive = std::to_string(::getppid());
  for (const std::string out : {"ids.npy", "back.txt"}) {
    write_file(dir + "/" + out + "." + dead + ".00c0ffee00c0ffee.tmp", std::string(1000, 'x'));  // killed writer
    write_file(dir + "/" + out + "." + alive + ".00c0ffee00c0ffee.tmp", "x");                    // a live one's
    write_file(dir + "/" + out + ".notes.tmp", "x");                                                // not a writer's
  }
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/ids.npy"}), 0);
  ASSERT_EQ(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/ids.npy", "--out", dir + "/back.txt"}), 0);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"back.txt", "back.txt." + alive + ".00c0ffee00c0ffee.tmp",
                                                    "back.txt.notes.tmp", "ids.npy",
                                                    "ids.npy." + alive + ".00c0ffee00c0ffee.tmp", "ids.npy.notes.tmp",
                                                    "t"}));
  // Unique names: two temporary names for one output never coincide.
  EXPECT_NE(nn::unique_tmp_path(dir + "/ids.npy"), nn::unique_tmp_path(dir + "/ids.npy"));
  EXPECT_THAT(nn::unique_tmp_path("o.npy"), ::testing::MatchesRegex("o\\.npy\\." + std::to_string(::getpid()) +
                                                                      "\\.[0-9a-f]{16}\\.tmp"));
  std::filesystem::remove_all(dir);
}

// tokenize train writes its three files into a fresh directory beside --out
// and swaps it in whole: a retrain replaces the old tokenizer at once (never
// a mix of the two runs' files), nothing is left beside it, and a directory
// a killed writer left is removed by the next train into the same --out.
TEST(TokenizeCli, TrainReplacesTheTokenizerDirectoryWhole) {
  const std::string dir = temp_dir("whole");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  EXPECT_EQ(load_tokenizer(dir + "/t").vocab.size(), 300u);
  const pid_t child = ::fork();  // a pid that is surely gone
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string stale = dir + "/t." + std::to_string(child) + ".00c0ffee00c0ffee.tmp";
  std::filesystem::create_directories(stale);
  write_file(stale + "/vocab.json", "{");  // half a tokenizer
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "350", "--special", "<|endoftext|>", "--out",
                      dir + "/t"}),
            0);
  const tok::BpeModel model = load_tokenizer(dir + "/t");
  EXPECT_EQ(model.vocab.size(), 350u);
  EXPECT_EQ(model.specials, std::vector<std::string>{"<|endoftext|>"});
  EXPECT_EQ(listing(dir), std::vector<std::string>{"t"}) << "the old directory and the stale one are gone";
  EXPECT_EQ(listing(dir + "/t"), (std::vector<std::string>{"merges.txt", "special_tokens.txt", "vocab.json"}));
  std::filesystem::remove_all(dir);
}

// --out equal to --input overwrote the input. Now refused, whatever the
// spelling (another path, a link), and the input is left as it was.
TEST(TokenizeCli, OutputThatIsTheInputIsRefused) {
  const std::string dir = temp_dir("outisin");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  write_file(dir + "/in.txt", read_all(corpus));
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/t", "--input", dir + "/in.txt", "--out", dir + "/ids.npy"}), 0);
  const std::string ids = read_all(dir + "/ids.npy");
  std::filesystem::create_symlink(dir + "/in.txt", dir + "/link.txt");
  for (const std::string& out : {dir + "/in.txt", dir + "/./in.txt", dir + "/link.txt"}) {
    EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", dir + "/in.txt", "--out", out}),
                    "tokenize", "--out '" + out + "' is the input", "in.txt");
  }
  EXPECT_RG_ERROR(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/ids.npy", "--out", dir + "/ids.npy"}),
                  "tokenize", "is the input");
  EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", dir + "/in.txt", "--out", dir + "/t/merges.txt"}),
                  "tokenize", "is the input", "merges.txt");
  EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", dir + "/in.txt", "--out", dir}), "tokenize",
                  "is a directory");
  EXPECT_EQ(read_all(dir + "/in.txt"), read_all(corpus));
  EXPECT_EQ(read_all(dir + "/ids.npy"), ids);
  std::filesystem::remove_all(dir);
}

// tokenize train --out X renamed the new tokenizer over whatever X was, with
// exit status 0: a file, a directory of the user's files, the directory
// holding --input. Now only a directory tokenize train wrote is replaced;
// anything else is refused, naming what is there, and left as it was.
TEST(TokenizeCli, TrainNeverReplacesWhatItDidNotWrite) {
  const std::string dir = temp_dir("noloss");
  const std::string text = read_all(fixture_path("bpe/corpus.txt"));
  write_file(dir + "/corpus.txt", text);
  const std::string corpus = dir + "/corpus.txt";
  const auto train_into = [&](const std::string& input, const std::string& out) {
    return tokenize({"train", "--input", input, "--vocab-size", "300", "--out", out});
  };
  write_file(dir + "/afile", "mine");
  EXPECT_RG_ERROR(train_into(corpus, dir + "/afile"), "tokenize", "--out '" + dir + "/afile' is a file");
  EXPECT_EQ(read_all(dir + "/afile"), "mine");

  std::filesystem::create_directories(dir + "/notes");
  write_file(dir + "/notes/a.txt", "a");
  write_file(dir + "/notes/vocab.json", "{}");
  EXPECT_RG_ERROR(train_into(corpus, dir + "/notes"), "tokenize", "holds a file that", "did not write", "a.txt");
  EXPECT_EQ(listing(dir + "/notes"), (std::vector<std::string>{"a.txt", "vocab.json"}));

  // GPT-2's downloaded files: its names, but no special_tokens.txt, which only tokenize train writes.
  std::filesystem::create_directories(dir + "/gpt2");
  write_file(dir + "/gpt2/vocab.json", "{}");
  write_file(dir + "/gpt2/merges.txt", "#version: 0.2\n");
  EXPECT_RG_ERROR(train_into(corpus, dir + "/gpt2"), "tokenize", "no special_tokens.txt");
  EXPECT_EQ(read_all(dir + "/gpt2/vocab.json"), "{}");

  // The directory holding the input, under any spelling: the corpus stays.
  for (const std::string& out : {dir, dir + "/.", dir + "/../" + std::filesystem::path(dir).filename().string()}) {
    EXPECT_RG_ERROR(train_into(corpus, out), "tokenize", "contains the input", "corpus.txt");
  }
  EXPECT_EQ(read_all(corpus), text);

  ASSERT_EQ(train_into(corpus, dir + "/tok"), 0);
  const std::string vocab = read_all(dir + "/tok/vocab.json");
  EXPECT_RG_ERROR(train_into(dir + "/tok/vocab.json", dir + "/tok"), "tokenize", "contains the input", "vocab.json");
  EXPECT_EQ(read_all(dir + "/tok/vocab.json"), vocab);
  // An empty directory and a tokenizer it wrote are replaced.
  std::filesystem::create_directories(dir + "/empty");
  EXPECT_EQ(train_into(corpus, dir + "/empty"), 0);
  EXPECT_EQ(train_into(corpus, dir + "/tok"), 0);
  EXPECT_EQ(listing(dir + "/tok"), (std::vector<std::string>{"merges.txt", "special_tokens.txt", "vocab.json"}));
  std::filesystem::remove_all(dir);
}

// An output inside an input directory (the tokenizer's) is refused too, and
// a missing parent directory of --out is created, as train creates its --out.
TEST(TokenizeCli, OutputInsideAnInputIsRefusedAndParentsAreMade) {
  const std::string dir = temp_dir("inside");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/t/ids.npy"}),
                  "tokenize", "lies inside the input '" + dir + "/t'");
  EXPECT_EQ(listing(dir + "/t"), (std::vector<std::string>{"merges.txt", "special_tokens.txt", "vocab.json"}));
  ASSERT_EQ(tokenize({"encode", "--tokenizer", dir + "/t", "--input", corpus, "--out", dir + "/a/b/ids.npy"}), 0);
  ASSERT_EQ(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/a/b/ids.npy", "--out", dir + "/c/back.txt"}),
            0);
  EXPECT_EQ(read_all(dir + "/c/back.txt"), read_all(corpus));
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/d/e/t"}), 0);
  std::filesystem::remove_all(dir);
}

// Issue 20's badly worded command lines.
TEST(TokenizeCli, HelpDirectoriesAndNegativeSizesAreSaidSo) {
  const std::string dir = temp_dir("words");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  for (const std::string sub : {"train", "encode", "decode"}) EXPECT_EQ(tokenize({sub, "--help"}), 0) << sub;
  EXPECT_EQ(tokenize({"train", "--input", corpus, "-h"}), 0);
  EXPECT_RG_ERROR(tokenize({"train", "--input", dir, "--vocab-size", "300", "--out", dir + "/t"}), "tokenize",
                  "--input '" + dir + "' is a directory");
  EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "-5", "--out", dir + "/t"}), "tokenize",
                  "--vocab-size must be a whole number in 256..100000000, got -5");
  EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "0", "--out", dir + "/t"}), "tokenize",
                  "--vocab-size must be a whole number in 256..100000000, got 0");
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  EXPECT_RG_ERROR(tokenize({"encode", "--tokenizer", dir + "/t", "--input", dir, "--out", dir + "/x.npy"}), "tokenize",
                  "is a directory");
  EXPECT_RG_ERROR(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir, "--out", dir + "/x.txt"}), "tokenize",
                  "is a directory");
  EXPECT_RG_ERROR(tokenize({"train", "--inptu\r\x01", "x"}), "tokenize", "'--inptu\\r\\x01'");
  std::filesystem::remove_all(dir);
}

TEST(TokenizeCli, BadInput) {
  const std::string dir = temp_dir("clibad");
  const std::string corpus = fixture_path("bpe/corpus.txt");
  write_file(dir + "/empty.txt", "");
  EXPECT_RG_ERROR(tokenize({"train", "--input", dir + "/empty.txt", "--vocab-size", "300", "--out", dir + "/t"}),
                  "train_bpe", "empty");
  EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "100", "--out", dir + "/t"}), "tokenize train",
                  "--vocab-size", "100", "256");
  EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "3x", "--out", dir + "/t"}), "tokenize",
                  "'3x'");
  EXPECT_RG_ERROR(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--special", "a\xe2\x82", "--out",
                            dir + "/t"}),
                  "tokenize", "--special", "byte offset 1");
  EXPECT_RG_ERROR(tokenize({"train", "--input", dir + "/none.txt", "--vocab-size", "300", "--out", dir + "/t"}),
                  "tokenize", "cannot open", "none.txt");
  EXPECT_RG_ERROR(tokenize({"encode", "--input", corpus, "--out", dir + "/x.npy"}), "tokenize", "--tokenizer");
  EXPECT_RG_ERROR(tokenize({"fly"}), "tokenize", "unknown subcommand 'fly'");
  EXPECT_RG_ERROR(tokenize({"train", "--input"}), "tokenize", "--input needs a value");
  // An id past the vocabulary in the file to decode.
  ASSERT_EQ(tokenize({"train", "--input", corpus, "--vocab-size", "300", "--out", dir + "/t"}), 0);
  nn::save_token_ids(dir + "/bad.npy", {5, 300});
  EXPECT_RG_ERROR(tokenize({"decode", "--tokenizer", dir + "/t", "--input", dir + "/bad.npy", "--out", dir + "/o.txt"}),
                  "tokenize", "bad.npy", "token id 300", "position 1", "[0, 300)");
  std::filesystem::remove_all(dir);
}

// Issue 20: retraining a run's tokenizer in place silently changed what
// `generate` printed, and a 350-token tokenizer was taken for a 400-token
// model. A run on BPE ids now records its inputs in config.txt, and checks them.
class RunInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("inputs");
    save_tokenizer(fixture_model(), dir_ + "/tok");
    ids_ = Tokenizer(fixture_model()).encode(read_all(fixture_path("bpe/corpus.txt")));
    nn::save_token_ids(dir_ + "/c_train.npy", ids_);
    nn::save_token_ids(dir_ + "/c_valid.npy", {ids_.begin(), ids_.begin() + 300});
    c_.task = "text";
    c_.task_options.tokenizer_dir = dir_ + "/tok";
    c_.task_options.data_path = dir_ + "/c_train.npy";
    c_.task_options.length = 16;
    c_.model.d_model = 16;
    c_.model.num_layers = 1;
    c_.model.num_heads = 2;
    c_.steps = 4;
    c_.batch_size = 2;
    c_.warmup = 1;
    c_.eval_every = 2;
    c_.eval_batches = 1;
    c_.out_dir = dir_ + "/run";
    c_.stop_after = 2;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::map<std::string, std::string> recorded() const { return tasks::read_run_config(dir_ + "/run/config.txt").settings; }
  // The run resumed with `c`, what it printed, and its error ("" when none).
  std::pair<std::string, std::string> resume(tasks::TrainConfig c) const {
    c.resume = true;
    c.stop_after = 0;
    std::FILE* out = std::tmpfile();
    std::string error;
    try {
      tasks::train(c, out);
    } catch (const Error& e) {
      error = e.what();
    }
    std::rewind(out);
    std::string printed;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) printed.append(buffer, n);
    std::fclose(out);
    return {printed, error};
  }
  std::string dir_;
  std::vector<int32_t> ids_;
  tasks::TrainConfig c_;
};

TEST_F(RunInputs, ARunRecordsItsTokenizerAndDataChecksums) {
  tasks::train(c_, nullptr);
  const auto r = recorded();
  EXPECT_EQ(r.at("tokenizer_checksum"), tasks::tokenizer_checksum(dir_ + "/tok"));
  EXPECT_THAT(r.at("tokenizer_checksum"), ::testing::MatchesRegex("fnv1a64:[0-9a-f]{16}"));
  EXPECT_EQ(r.at("tokenizer_vocab"), "400");
  EXPECT_EQ(r.at("data_bytes"), std::to_string(std::filesystem::file_size(dir_ + "/c_train.npy")));
  EXPECT_EQ(r.at("data_checksum"), tasks::file_checksum(dir_ + "/c_train.npy"));
  EXPECT_EQ(r.at("valid_bytes"), std::to_string(128 + 2 * 300));
  EXPECT_EQ(r.at("valid_checksum"), tasks::file_checksum(dir_ + "/c_valid.npy"));
  // FNV-1a of known bytes, so the checksum is the published function.
  write_file(dir_ + "/a.txt", "a");
  EXPECT_EQ(tasks::file_checksum(dir_ + "/a.txt"), "fnv1a64:af63dc4c8601ec8c");
  // The same inputs resume without a word.
  const auto [printed, error] = resume(c_);
  EXPECT_EQ(error, "");
  EXPECT_EQ(printed.find("changed"), std::string::npos);
}

TEST_F(RunInputs, GenerateRefusesAnotherTokenizerNamingBoth) {
  tasks::train(c_, nullptr);
  const auto r = recorded();
  const std::string before = tasks::tokenizer_checksum(dir_ + "/tok");
  tasks::check_tokenizer_of_run(dir_ + "/run", r, dir_ + "/tok", 400, 400);  // its own: accepted
  // Retrained in place, 350 tokens, for a 400-token model.
  save_tokenizer(train_bpe(read_all(fixture_path("bpe/corpus.txt")), 350, kSpecials), dir_ + "/tok");
  const std::string after = tasks::tokenizer_checksum(dir_ + "/tok");
  ASSERT_NE(after, before);
  EXPECT_RG_ERROR(tasks::check_tokenizer_of_run(dir_ + "/run", r, dir_ + "/tok", 350, 400), "generate",
                  "(checksum " + after + ", 350 tokens)", "(checksum " + before + ", 400 tokens)");
  // A run from before the record: the sizes still must agree.
  EXPECT_RG_ERROR(tasks::check_tokenizer_of_run(dir_ + "/run", {}, dir_ + "/tok", 350, 400), "generate",
                  "has 350 tokens but the model", "vocabulary of 400");
  // Retrained with the same size on other text: only the checksum tells.
  save_tokenizer(train_bpe(read_all(fixture_path("bpe/sample.txt")) + read_all(fixture_path("bpe/corpus.txt")), 400,
                           kSpecials),
                 dir_ + "/tok");
  const std::string other = tasks::tokenizer_checksum(dir_ + "/tok");
  ASSERT_NE(other, before);
  EXPECT_RG_ERROR(tasks::check_tokenizer_of_run(dir_ + "/run", r, dir_ + "/tok", 400, 400), "generate",
                  "(checksum " + other + ", 400 tokens)", "(checksum " + before + ", 400 tokens)");
  // --resume refuses it too, naming both.
  const auto [printed, error] = resume(c_);
  EXPECT_THAT(error, ::testing::HasSubstr("--resume: the tokenizer"));
  EXPECT_THAT(error, ::testing::HasSubstr("(checksum " + other + ", 400 tokens)"));
  EXPECT_THAT(error, ::testing::HasSubstr("(checksum " + before + ", 400 tokens)"));
}

TEST_F(RunInputs, ResumeRefusesChangedDataUnlessAllowedAndThenSaysSo) {
  tasks::train(c_, nullptr);
  const std::string before = tasks::file_checksum(dir_ + "/c_train.npy");
  std::vector<int32_t> changed = ids_;
  std::reverse(changed.begin(), changed.end());  // same size, other bytes
  nn::save_token_ids(dir_ + "/c_train.npy", changed);
  const std::string after = tasks::file_checksum(dir_ + "/c_train.npy");
  ASSERT_NE(after, before);
  auto [printed, error] = resume(c_);
  EXPECT_THAT(error, ::testing::HasSubstr("--resume: the data '" + std::filesystem::absolute(dir_ + "/c_train.npy").string()));
  EXPECT_THAT(error, ::testing::HasSubstr("checksum " + after + " (the run began on"));
  EXPECT_THAT(error, ::testing::HasSubstr("checksum " + before + ")"));
  EXPECT_THAT(error, ::testing::HasSubstr("--allow-changed-data"));
  EXPECT_EQ(recorded().at("data_checksum"), before) << "the refused resume changed nothing";
  tasks::TrainConfig allowed = c_;
  allowed.allow_changed_data = true;
  std::tie(printed, error) = resume(allowed);
  EXPECT_EQ(error, "");
  EXPECT_THAT(printed, ::testing::HasSubstr("--allow-changed-data: continuing the run in"));
  EXPECT_THAT(printed, ::testing::HasSubstr("on changed data: the data"));
  EXPECT_EQ(recorded().at("data_checksum"), after) << "the run now records the data it went on with";
}

// Perplexity is exp of the mean cross-entropy over every evaluated token: with
// two evaluation batches of different losses l0 and l1 it is exp((l0 + l1) / 2),
// which is less than the mean of exp(l0) and exp(l1) (what averaging each
// batch's perplexity gave). The loss is the mean over all tokens either way.
TEST(TokenTextTask, PerplexityIsExpOfTheMeanLossOverEveryEvalToken) {
  const std::string dir = temp_dir("perplexity");
  save_tokenizer(fixture_model(), dir + "/tok");
  const auto ids = Tokenizer(fixture_model()).encode(read_all(fixture_path("bpe/corpus.txt")));
  nn::save_token_ids(dir + "/c_train.npy", ids);
  nn::save_token_ids(dir + "/c_valid.npy", ids);
  const tasks::TokenTextTask task(dir + "/tok", dir + "/c_train.npy", 16);
  nn::TransformerConfig mc;
  mc.vocab_size = task.vocab_size();
  mc.context_length = 16;
  mc.d_model = 16;
  mc.num_layers = 1;
  mc.num_heads = 2;
  Generator init(3);
  nn::TransformerLM model(mc, &init);
  const tasks::EvalRecord one = tasks::evaluate(model, task, 1, 2, 5);  // batch 0
  const tasks::EvalRecord two = tasks::evaluate(model, task, 2, 2, 5);  // batches 0 and 1, as many tokens each
  const double l0 = one.loss, l1 = 2 * two.loss - one.loss;
  std::cout << fmt::format("batch losses {:.6f} and {:.6f}: exp of the mean {:.6f}, mean of the exps {:.6f}\n", l0, l1,
                           std::exp(two.loss), (std::exp(l0) + std::exp(l1)) / 2);
  // exp's convexity puts the mean of exp(l0) and exp(l1) above exp of their mean by about exp(mean) (l0 - l1)^2 / 8:
  // a relative 1e-5 at least, far above the tolerances below.
  ASSERT_GT(std::abs(l0 - l1), 1e-2) << "the two batches' losses must differ for this test to mean something";
  EXPECT_NEAR(one.metric, std::exp(l0), 1e-9 * one.metric);
  EXPECT_NEAR(two.metric, std::exp(two.loss), 1e-9 * two.metric);
  EXPECT_LT(two.metric, (std::exp(l0) + std::exp(l1)) / 2 - 1e-6 * two.metric) << "not the mean of the batches' exps";
  // The sums themselves: the metric of two batches' sums is exp of their pooled mean.
  Generator gen(1);
  const tasks::Batch b = task.eval_batch(2, gen);
  tasks::MetricSum uniform = task.metric_sum(zeros({2, 16, task.vocab_size()}), b);
  EXPECT_EQ(uniform.count, 32);
  EXPECT_NEAR(uniform.total / uniform.count, std::log(static_cast<double>(task.vocab_size())), 1e-5);
  tasks::MetricSum pooled = uniform;
  pooled += {uniform.total * 3, uniform.count};  // a batch of 3 ln V per token
  const double v = static_cast<double>(task.vocab_size());
  EXPECT_NEAR(task.metric_of(pooled), v * v, 1e-6 * v * v);  // exp(2 ln V), to the float32 loss's precision
  std::filesystem::remove_all(dir);
}

TEST(TokenTextTask, BatchesFromTrainAndValidIds) {
  const std::string dir = temp_dir("task");
  save_tokenizer(fixture_model(), dir + "/tok");
  Tokenizer tok(fixture_model());
  const auto ids = tok.encode(read_all(fixture_path("bpe/corpus.txt")));
  nn::save_token_ids(dir + "/c_train.npy", ids);
  EXPECT_RG_ERROR(tasks::TokenTextTask(dir + "/tok", dir + "/c_train.npy", 32), "text", "c_valid.npy");
  nn::save_token_ids(dir + "/c_valid.npy", {ids.begin(), ids.begin() + 100});
  tasks::TokenTextTask task(dir + "/tok", dir + "/c_train.npy", 32);
  EXPECT_EQ(task.vocab_size(), 400);
  EXPECT_EQ(task.metric_name(), "perplexity");
  Generator gen(0);
  const tasks::Batch b = task.eval_batch(4, gen);
  ASSERT_EQ(b.inputs.shape(), (Shape{4, 32}));
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t + 1 < 32; ++t) EXPECT_EQ(b.targets.at<int64_t>({r, t}), b.inputs.at<int64_t>({r, t + 1}));
  // Uniform logits: perplexity equals the vocabulary size.
  EXPECT_NEAR(task.metric(zeros({4, 32, 400}), b), 400.0, 400.0 * 1e-5);
  nn::save_token_ids(dir + "/c_valid.npy", {1, 2, 400});
  EXPECT_RG_ERROR(tasks::TokenTextTask(dir + "/tok", dir + "/c_train.npy", 32), "text", "c_valid.npy", "token id 400",
                  "position 2");
  EXPECT_RG_ERROR(tasks::TokenTextTask(dir + "/tok", dir + "/ids.npy", 32), "text", "must contain 'train'");
  std::filesystem::remove_all(dir);
}
