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
#include <random>
#include <sstream>
#include <string>
#include <vector>

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

std::vector<size_t> parse_list(const std::string& s) {
  std::vector<size_t> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoul(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {1000, 10000, 50000};
  size_t plain_up_to = 10000, bytes = 1000000;
  int repeats = 3;
  bool crossover = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--merges") sizes = parse_list(value());
    else if (a == "--plain-up-to") plain_up_to = std::stoul(value());
    else if (a == "--bytes") bytes = std::stoul(value());
    else if (a == "--repeats") repeats = std::stoi(value());
    else if (a == "--crossover") crossover = true;
    else {
      std::fprintf(stderr,
                   "usage: ropegrad-encode-bench [--merges 1000,10000,50000] [--plain-up-to 10000] [--bytes 1000000] "
                   "[--repeats 3] [--crossover]\n");
      return 2;
    }
  }
  const size_t most = *std::max_element(sizes.begin(), sizes.end());
  double t0 = now_s();
  const std::string corpus = word_corpus(400000);
  const BpeModel trained = train_bpe(corpus, static_cast<int64_t>(256 + most), {});
  std::printf("merge table: train_bpe to %zu merges on %zu bytes of generated words: %.1f s\n", trained.merges.size(),
              corpus.size(), now_s() - t0);
  if (trained.merges.size() < most) {
    std::fprintf(stderr, "training stopped at %zu merges\n", trained.merges.size());
    return 1;
  }
  std::mt19937 rng(2);
  const std::string text = letters(rng, bytes);

  if (crossover) {
    std::printf("\nmicroseconds per pre-token of L letters (encode_pretoken, fast forms off | encode_pretoken_heap)\n");
    std::printf("%8s", "L");
    for (size_t k : sizes) std::printf("  %9zu merges: plain  heap", k);
    std::printf("\n");
    const FastFormsScope off(false);
    std::vector<Tokenizer> toks;
    for (size_t k : sizes) toks.emplace_back(first_merges(trained, k));
    for (size_t len : {2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}) {
      std::printf("%8zu", len);
      for (const Tokenizer& tok : toks) {
        const size_t count = std::max<size_t>(200, 400000 / len);
        double best_plain = 1e30, best_heap = 1e30;
        for (int r = 0; r < repeats; ++r) {
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
    return 0;
  }

  std::printf("\nencode of %zu bytes of letters a-z (one pre-token), fastest of %d: wall (CPU) seconds\n", bytes,
              repeats);
  std::printf("%8s  %18s  %18s  %6s\n", "merges", "plain", "heap", "ids");
  for (size_t k : sizes) {
    const Tokenizer tok(first_merges(trained, k));
    auto best_of = [&](bool fast, std::vector<int32_t>* ids) {
      const FastFormsScope scope(fast);
      Timing best;
      for (int r = 0; r < repeats; ++r) {
        const double t = now_s(), c = cpu_s();
        *ids = tok.encode(text);
        best.wall = std::min(best.wall, now_s() - t);
        best.cpu = std::min(best.cpu, cpu_s() - c);
      }
      return best;
    };
    auto cell = [](const Timing& t) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.3f (%.3f)", t.wall, t.cpu);
      return std::string(buf);
    };
    std::vector<int32_t> heap_ids, plain_ids;
    const int64_t runs_before = fast_form_runs(FastForm::EncodeHeap);
    const Timing heap = best_of(true, &heap_ids);
    if (fast_form_runs(FastForm::EncodeHeap) == runs_before) std::printf("(the heap form did not run)\n");
    const std::string plain = k <= plain_up_to ? cell(best_of(false, &plain_ids)) : "skipped";
    const char* same = plain_ids.empty() ? "" : plain_ids == heap_ids ? "equal" : "DIFFER";
    std::printf("%8zu  %18s  %18s  %6s  (%zu tokens)\n", k, plain.c_str(), cell(heap).c_str(), same, heap_ids.size());
    std::fflush(stdout);
  }
  return 0;
}
