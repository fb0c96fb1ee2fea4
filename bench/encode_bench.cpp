// ropegrad-encode-bench: how long encode takes on one long pre-token, the
// plain form (ex19-encode, fast forms off) next to the heap form
// (tokenizer/fast/encode_heap.h). Not a test: it asserts nothing about time.
//
//   ropegrad-encode-bench [--merges 1000,10000,50000] [--plain-up-to 10000]
//                         [--bytes 1000000] [--repeats 3] [--crossover]
//
// The merge table is trained with ropegrad's own train_bpe on a generated
// corpus of distinct words: 400,000 words of 3 to 24 letters a-z, drawn
// uniformly by std::mt19937 (seed 1), one per line (so each line is one
// pre-token of letters alone), trained once to the largest size asked for;
// a table of k merges is its first k merges (training is greedy, so those
// are what training to k merges gives). The text is `--bytes` letters a-z
// from std::mt19937 (seed 2): one pre-token. Each form encodes it with
// Tokenizer::encode, `--repeats` times; the fastest wall time and the
// fastest CPU time are printed, and where both forms ran, that their ids are
// equal. The plain form runs only up to
// `--plain-up-to` merges (at 50,000 it would take minutes).
//
// --crossover prints, for pre-tokens of 2 to 256 letters, the time per
// pre-token of each form (encode_pretoken with fast forms off, and
// encode_pretoken_heap) at each table size: where the heap form starts to
// win (tokenizer/encode.cpp's kHeapFrom).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/flags.h"
#include "tensor/fast_forms.h"
#include "tokenizer/bpe_train.h"
#include "tokenizer/tokenizer.h"

using namespace ropegrad;
using namespace ropegrad::tok;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This process's CPU time: encode runs on one thread, so on a shared machine
// this is the time it would take alone, near enough, when the wall clock
// also counts the other programs' turns.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall and CPU seconds of the fastest of the repeats (each minimum on its own).
struct Timing {
  double wall = 1e30, cpu = 1e30;
};

std::string letters(std::mt19937& rng, size_t n) {
  std::string s(n, 'a');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::string word_corpus(int words) {
  std::mt19937 rng(1);
  std::string corpus;
  for (int i = 0; i < words; ++i) {
    corpus += letters(rng, 3 + rng() % 22);
    corpus += '\n';
  }
  return corpus;
}

// The first k merges of model (no special tokens: merge r made token 256 + r).
BpeModel first_merges(const BpeModel& model, size_t k) {
  BpeModel m;
  m.merges.assign(model.merges.begin(), model.merges.begin() + static_cast<std::ptrdiff_t>(k));
  m.vocab.assign(model.vocab.begin(), model.vocab.begin() + static_cast<std::ptrdiff_t>(256 + k));
  return m;
}

struct Options {
  std::vector<size_t> sizes;  // merge-table sizes
  size_t plain_up_to = 0, bytes = 0;
  int repeats = 0;
  bool crossover = false;
};

// The flags, read by the command line's one reader (io/flags.h); nullopt for --help.
std::optional<Options> read_options(int argc, char** argv) {
  using namespace ropegrad::flags;
  const Command command{
      "ropegrad-encode-bench", "",
      "encode of one long pre-token, the plain form next to the heap form (asserts nothing about time)",
      {whole_list("merges", 1, 1000000, ',', "1000,10000,50000", "merge-table sizes"),
       whole("plain-up-to", 0, 1000000, "10000", "the plain form runs up to this many merges"),
       whole("bytes", 1, int64_t{1} << 32, "1000000", "letters in the text to encode", "bytes"),
       whole("repeats", 1, 1000, "3", "runs of each form; the fastest counts"),
       on_off("crossover", "time per pre-token of 2 to 256 letters, each form, each table size")}};
  const std::optional<Values> v = read(command, std::vector<std::string>(argv + 1, argv + argc));
  if (!v) return std::nullopt;
  Options o;
  for (const int64_t k : v->wholes("merges")) o.sizes.push_back(static_cast<size_t>(k));
  o.plain_up_to = static_cast<size_t>(v->whole("plain-up-to"));
  o.bytes = static_cast<size_t>(v->whole("bytes"));
  o.repeats = static_cast<int>(v->whole("repeats"));
  o.crossover = v->on("crossover");
  return o;
}

// Microseconds per pre-token of each form, for pre-tokens of 2 to 256 letters of `text`.
void print_crossover(const BpeModel& trained, const Options& o, const std::string& text) {
  std::printf("\nmicroseconds per pre-token of L letters (encode_pretoken, fast forms off | encode_pretoken_heap)\n");
  std::printf("%8s", "L");
  for (size_t k : o.sizes) std::printf("  %9zu merges: plain  heap", k);
  std::printf("\n");
  const FastFormsScope off(false);
  std::vector<Tokenizer> toks;
  for (size_t k : o.sizes) toks.emplace_back(first_merges(trained, k));
  for (size_t len : {2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}) {
    std::printf("%8zu", len);
    for (const Tokenizer& tok : toks) {
      const size_t count = std::max<size_t>(200, 400000 / len);
      double best_plain = 1e30, best_heap = 1e30;
      for (int r = 0; r < o.repeats; ++r) {
        size_t sink = 0;
        double t = now_s();
        for (size_t j = 0; j < count; ++j) sink += tok.encode_pretoken(std::string_view(text).substr(j % 4096, len)).size();
        best_plain = std::min(best_plain, now_s() - t);
        t = now_s();
        for (size_t j = 0; j < count; ++j)
          sink -= tok.encode_pretoken_heap(std::string_view(text).substr(j % 4096, len)).size();
        best_heap = std::min(best_heap, now_s() - t);
        if (sink != 0) std::printf("(the forms give different lengths!)");
      }
      std::printf("  %16s %6.2f %5.2f", "", 1e6 * best_plain / count, 1e6 * best_heap / count);
    }
    std::printf("\n");
  }
}

std::string cell(const Timing& t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f (%.3f)", t.wall, t.cpu);
  return std::string(buf);
}

// The whole text encoded by each form at each table size: wall (CPU) seconds, and whether the ids agree.
void print_encode_times(const BpeModel& trained, const Options& o, const std::string& text) {
  std::printf("\nencode of %zu bytes of letters a-z (one pre-token), fastest of %d: wall (CPU) seconds\n", o.bytes,
              o.repeats);
  std::printf("%8s  %18s  %18s  %6s\n", "merges", "plain", "heap", "ids");
  for (size_t k : o.sizes) {
    const Tokenizer tok(first_merges(trained, k));
    auto best_of = [&](bool fast, std::vector<int32_t>* ids) {
      const FastFormsScope scope(fast);
      Timing best;
      for (int r = 0; r < o.repeats; ++r) {
        const double t = now_s(), c = cpu_s();
        *ids = tok.encode(text);
        best.wall = std::min(best.wall, now_s() - t);
        best.cpu = std::min(best.cpu, cpu_s() - c);
      }
      return best;
    };
    std::vector<int32_t> heap_ids, plain_ids;
    const int64_t runs_before = fast_form_runs(FastForm::EncodeHeap);
    const Timing heap = best_of(true, &heap_ids);
    if (fast_form_runs(FastForm::EncodeHeap) == runs_before) std::printf("(the heap form did not run)\n");
    const std::string plain = k <= o.plain_up_to ? cell(best_of(false, &plain_ids)) : "skipped";
    const char* same = plain_ids.empty() ? "" : plain_ids == heap_ids ? "equal" : "DIFFER";
    std::printf("%8zu  %18s  %18s  %6s  (%zu tokens)\n", k, plain.c_str(), cell(heap).c_str(), same, heap_ids.size());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options;
  try {
    options = read_options(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (!options) return 0;  // --help
  const size_t most = *std::max_element(options->sizes.begin(), options->sizes.end());
  const double t0 = now_s();
  const std::string corpus = word_corpus(400000);
  const BpeModel trained = train_bpe(corpus, static_cast<int64_t>(256 + most), {});
  std::printf("merge table: train_bpe to %zu merges on %zu bytes of generated words: %.1f s\n", trained.merges.size(),
              corpus.size(), now_s() - t0);
  if (trained.merges.size() < most) {
    std::fprintf(stderr, "training stopped at %zu merges\n", trained.merges.size());
    return 1;
  }
  std::mt19937 rng(2);
  const std::string text = letters(rng, options->bytes);
  if (options->crossover) {
    print_crossover(trained, *options, text);
  } else {
    print_encode_times(trained, *options, text);
  }
  return 0;
}
