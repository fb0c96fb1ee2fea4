// `ropegrad tokenize train|encode|decode`: build a BPE tokenizer from a text
// file, turn text into a .npy of token ids, and ids back into text.
#include <fcntl.h>  // AT_FDCWD, for renameat2; open
#include <unistd.h>  // close

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "io/tmp_file.h"
#include "io/read_file.h"
#include "io/token_memmap.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "train/run_files.h"
#include "tensor/error.h"
#include "tensor/printable.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ropegrad::tasks {

namespace {

constexpr const char* kUsage =
    "usage: ropegrad tokenize train  --input FILE --vocab-size N [--special TOKEN]... --out DIR\n"
    "       ropegrad tokenize encode --tokenizer DIR --input FILE --out IDS.npy\n"
    "       ropegrad tokenize decode --tokenizer DIR --input IDS.npy --out FILE\n"
    "\n"
    "Run 'ropegrad tokenize train|encode|decode --help' for a subcommand's options.\n";

// One table a subcommand.
const std::vector<flags::Command>& subcommands() {
  static const std::vector<flags::Command> c = [] {
    using namespace flags;
    const Flag tokenizer = required(path("tokenizer", "DIR", "a tokenizer directory (ropegrad tokenize train)"));
    return std::vector<Command>{
        {"ropegrad tokenize train", "usage: ropegrad tokenize train --input FILE --vocab-size N [--special TOKEN]... --out DIR\n",
         "Trains a byte-level BPE tokenizer on a text file.",
         {required(path("input", "FILE", "the text to train on")),
          // a model's vocabulary (cli/model_flags.h); 256 bytes + the special tokens at least
          required(whole("vocab-size", 256, kMaxVocab, "", "tokens: the 256 bytes, the special tokens and the merges")),
          repeated(text("special", "TOKEN", "a special token, never split nor merged (e.g. '<|endoftext|>')")),
          required(path("out", "DIR", "the tokenizer's directory (vocab.json, merges.txt, special_tokens.txt)"))}},
        {"ropegrad tokenize encode", "usage: ropegrad tokenize encode --tokenizer DIR --input FILE --out IDS.npy\n",
         "Encodes a text file into a .npy of token ids.",
         {tokenizer, required(path("input", "FILE", "the text")), required(path("out", "IDS.npy", "the ids"))}},
        {"ropegrad tokenize decode", "usage: ropegrad tokenize decode --tokenizer DIR --input IDS.npy --out FILE\n",
         "Decodes a .npy of token ids into text.",
         {tokenizer, required(path("input", "IDS.npy", "the ids")), required(path("out", "FILE", "the text"))}},
    };
  }();
  return c;
}

struct Options {
  std::string sub, input, out, tokenizer;
  int64_t vocab_size = -1;
  std::vector<std::string> specials;
};

// The subcommand's options (`words` start with it); nullopt for --help.
std::optional<Options> options_of(const std::vector<std::string>& words) {
  RG_CHECK(!words.empty(), "ropegrad tokenize", "which one: train, encode or decode? (see ropegrad tokenize --help)");
  const std::string& sub = words[0];
  const auto it = std::find_if(subcommands().begin(), subcommands().end(),
                               [&](const flags::Command& c) { return c.name == "ropegrad tokenize " + sub; });
  if (it == subcommands().end()) {
    const std::string near = flags::closest(sub, {"train", "encode", "decode"});
    fail("ropegrad tokenize", "unknown subcommand {}{} (train, encode or decode; see ropegrad tokenize --help)",
         quote_bytes(sub), near.empty() ? "" : fmt::format("; did you mean {}?", near));
  }
  const std::optional<flags::Values> v = flags::read(*it, std::vector<std::string>(words.begin() + 1, words.end()));
  if (!v) return std::nullopt;
  Options o;
  o.sub = sub;
  o.input = v->text("input");
  o.out = v->text("out");
  if (sub == "train") {
    o.vocab_size = v->whole("vocab-size");
    o.specials = v->all("special");
    for (const std::string& special : o.specials) {
      const int64_t bad = tok::first_invalid_utf8(special);
      RG_CHECK(bad < 0, it->name, "--special '{}' is not valid UTF-8 (byte offset {})",
               tok::replace_invalid_utf8(special), bad);
    }
  } else {
    o.tokenizer = v->text("tokenizer");
  }
  return o;
}

// --input: a readable file, not a directory (which read as an empty corpus).
void check_input_file(const std::string& path) {
  std::error_code error;
  RG_CHECK(!std::filesystem::is_directory(path, error), "tokenize", "--input '{}' is a directory, not a file", path);
}

std::string read_text(const std::string& path) {
  check_input_file(path);
  return io::read_file(path, "tokenize");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What `tokenize train` writes in --out; the first is its signature (GPT-2's
// downloaded files have no special_tokens.txt).
const std::vector<std::string> kTokenizerFiles = {"special_tokens.txt", "vocab.json", "merges.txt"};

void check_replaceable(const std::string& out) {
  check_replaceable_directory("tokenize", "--out", out, kTokenizerFiles, "`ropegrad tokenize train`");
}

// The tokenizer written into a fresh directory beside OUT, then swapped in
// whole (renameat2 RENAME_EXCHANGE): an interrupted or failed run leaves the
// old tokenizer or the new one, never a mix of their files; the directory it
// leaves behind is removed by the next writer (io/tmp_file.h).
void save_tokenizer_whole(const tok::BpeModel& model, const std::string& out) {
  namespace fs = std::filesystem;
  const std::string tmp = nn::unique_tmp_path(out);
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{tmp};
  tok::save_tokenizer(model, tmp);
  check_replaceable(out);  // again: the training took a while
  if (fs::exists(out)) {
    RG_CHECK(::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0, "tokenize",
             "cannot replace {} with the new tokenizer: {}", out, std::strerror(errno));
  } else {
    RG_CHECK(std::rename(tmp.c_str(), out.c_str()) == 0, "tokenize", "cannot move the new tokenizer to {}: {}", out,
             std::strerror(errno));
  }
}

int train_tokenizer(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_input_file(o.input);  // before the output: a directory given as --input is the mistake to name
  const OutputLock lock(o.out, "tokenize", {o.input}, /*directory=*/true);
  check_replaceable(o.out);
  const std::string corpus = read_text(o.input);
  const tok::BpeModel model = tok::train_bpe(corpus, o.vocab_size, o.specials);
  save_tokenizer_whole(model, o.out);
  std::printf("trained %zu tokens (%zu merges) on %zu bytes in %.2f s -> %s/{vocab.json,merges.txt,special_tokens.txt}\n",
              model.vocab.size(), model.merges.size(), corpus.size(), seconds_since(t0), o.out.c_str());
  return 0;
}

// One writer per output, never the input itself (nor a tokenizer file).
OutputLock lock_output(const Options& o) {
  check_input_file(o.input);
  return OutputLock(o.out, "tokenize", {o.input, o.tokenizer, o.tokenizer + "/vocab.json", o.tokenizer + "/merges.txt",
                                        o.tokenizer + "/special_tokens.txt"});
}

int encode(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const OutputLock lock = lock_output(o);
  const tok::Tokenizer tokenizer(tok::load_tokenizer(o.tokenizer));
  std::ifstream in(o.input, std::ios::binary);
  RG_CHECK(in.good(), "tokenize", "cannot open {}", o.input);
  // Ids go to the file as they come: a corpus larger than memory encodes in
  // about chunk-sized memory (the .npy appears only when complete).
  nn::TokenIdWriter out(o.out, tokenizer.vocab_size());
  tokenizer.encode_stream(in, [&](const std::vector<int32_t>& part) { out.write(part); });
  RG_CHECK(!in.bad(), "tokenize", "reading {} failed", o.input);
  out.close();
  std::printf("encoded %s into %lld tokens in %.2f s -> %s\n", o.input.c_str(), static_cast<long long>(out.count()),
              seconds_since(t0), o.out.c_str());
  return 0;
}

// Decoded a block of ids at a time, so neither the ids nor the text are held
// whole. Bytes that may begin a character completed in the next block wait
// for it: U+FFFD replaces exactly what decode() of the whole would replace.
int decode(const Options& o) {
  const OutputLock lock = lock_output(o);
  const tok::Tokenizer tokenizer(tok::load_tokenizer(o.tokenizer));
  nn::TokenMemmap ids_file(o.input);
  // The text goes to a temporary file of its own (PATH.<pid>.<random>.tmp, O_EXCL: never a file of
  // the user's), then replaces --out whole (io/tmp_file.h): an interrupted decode leaves the old file.
  const std::string tmp = nn::unique_tmp_path(o.out);
  struct TmpFd {
    const std::string& path;
    int fd;
    ~TmpFd() {  // an error before the rename: the temporary file goes (replace_with_tmp took it otherwise)
      if (fd < 0) return;
      ::close(fd);
      std::remove(path.c_str());
    }
  } file{tmp, ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  RG_CHECK(file.fd >= 0, "tokenize", "cannot write {}: {}", tmp, std::strerror(errno));
  const auto write_text = [&](std::string_view text) { nn::write_all(file.fd, text.data(), text.size(), tmp, "tokenize"); };
  constexpr int64_t kBlock = 1 << 20;
  std::vector<int32_t> ids;
  std::string pending;  // an incomplete character from the previous block
  for (int64_t begin = 0; begin < ids_file.size(); begin += kBlock) {
    const int64_t end = std::min(ids_file.size(), begin + kBlock);
    ids.clear();
    for (int64_t i = begin; i < end; ++i) {
      const int64_t id = ids_file.at(i);
      RG_CHECK(id >= 0 && id < tokenizer.vocab_size(), "tokenize", "{}: token id {} at position {} is outside [0, {})",
               o.input, id, i, tokenizer.vocab_size());
      ids.push_back(static_cast<int32_t>(id));
    }
    pending += tokenizer.decode_bytes(ids);
    const size_t keep = tok::incomplete_utf8_tail(pending);
    write_text(tok::replace_invalid_utf8(std::string_view(pending).substr(0, pending.size() - keep)));
    pending.erase(0, pending.size() - keep);
  }
  write_text(tok::replace_invalid_utf8(pending));
  const int fd = file.fd;
  file.fd = -1;
  nn::replace_with_tmp(fd, tmp, o.out, "tokenize");  // fsync, rename over --out, fsync the directory
  std::printf("decoded %lld tokens -> %s\n", static_cast<long long>(ids_file.size()), o.out.c_str());
  return 0;
}

}  // namespace

std::vector<flags::Command> tokenize_commands() { return subcommands(); }

void check_tokenize(const std::vector<std::string>& words) {
  if (!words.empty() && (words[0] == "--help" || words[0] == "-h")) return;
  options_of(words);
}

int run_tokenize(int argc, char** argv) {
  if (argc < 1 || std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h") {
    std::fputs(kUsage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  const std::optional<Options> read = options_of(std::vector<std::string>(argv, argv + argc));
  if (!read) return 0;  // --help
  const Options& o = *read;
  if (o.sub == "train") return train_tokenizer(o);
  return o.sub == "encode" ? encode(o) : decode(o);
}

}  // namespace ropegrad::tasks
