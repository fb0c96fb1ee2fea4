// The data of the book's explanatory figures, printed by the library itself;
// docs/figures/draw_figures.py turns each mode's lines into an SVG, and the docs
// test (docs/tests/check_docs.py, `<!-- figure: ... -->`) redraws every figure
// and compares it with the file byte for byte. One mode per figure:
//
//   snippet_figure_data views             chapter 1: four views of one storage (shape, strides, offset,
//                                         the storage index each element reads)
//   snippet_figure_data broadcast-matmul  chapter 3: a right operand broadcast over a batch (stride 0)
//                                         and its gradient, each batch's part summed back by sum_to
//   snippet_figure_data rope              chapter 9: the pairs of a real vector rotated at positions 0..5
//   snippet_figure_data masks             chapter 12: the attention weights under a causal mask, a
//                                         padding mask, both, and a causal offset
//   snippet_figure_data tiles             chapter 12: the tile products causal tiled attention hands to
//                                         BLAS, read from a GemmTrace
//   snippet_figure_data gram              chapter 16: q, r and three keys in R^3, the Gram determinant of
//                                         each, and the key's height above the (q, r) plane
//   snippet_figure_data bpe               chapter 19: a real BPE run: each merge and how the words are
//                                         split after it
//
// Every line is "KEY value value ...", numbers in fixed formats, so the output
// (and the figure) is the same on every machine.
#include <cmath>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/fast/attention_tiled.h"
#include "nn/functional.h"
#include "nn/rope.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tokenizer/bpe_train.h"

using namespace ropegrad;

namespace {

std::string join(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(s[i]);
  }
  return out;
}

std::string numbers(const Tensor& t, const char* format = "{:g}") {
  std::string out;
  const std::vector<double> v = contiguous(to(t, DType::Float64)).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ' ';
    out += fmt::format(fmt::runtime(format), v[i]);
  }
  return out;
}

double dot(const Tensor& a, const Tensor& b) { return sum(a * b).item(); }

void print_view(const std::string& name, const Tensor& t) {
  // the storage index of each element, walked in row-major order of the view
  std::string reads;
  const Shape& shape = t.shape();
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, index = t.offset();
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      index += (rest % shape[d]) * t.strides()[d];
      rest /= shape[d];
    }
    if (flat) reads += ' ';
    reads += std::to_string(index);
  }
  fmt::print("view {}\nshape {}\nstrides {}\noffset {}\nreads {}\nvalues {}\n", name, join(shape),
             join(t.strides()), t.offset(), reads, numbers(t));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  set_num_threads(1);  // the GemmTrace's order is the order of one thread
  if (what == "views") {
    const Tensor x = view(arange(0.0, 12.0, 1.0), {3, 4});
    fmt::print("storage 12\n");
    print_view("x = arange(12).view({3, 4})", x);
    print_view("transpose(x, 0, 1)", transpose(x, 0, 1));
    print_view("narrow(x, 1, 1, 2)", narrow(x, 1, 1, 2));
    print_view("expand(narrow(x, 1, 3, 1), {3, 4})", expand(narrow(x, 1, 3, 1), {3, 4}));
  } else if (what == "broadcast-matmul") {
    // a (2, 3, 2) @ b (2, 2): b is used by both batch entries
    const Tensor a = view(arange(1.0, 13.0, 1.0, DType::Float64), {2, 3, 2});
    Tensor b = tensor({1.0, 0.0, 0.0, 1.0}, {2, 2}, DType::Float64).requires_grad_();
    const Tensor out = matmul(a, b);
    const Tensor g = ones({2, 3, 2}, DType::Float64);
    backward(sum(out));
    const Tensor b_expanded = expand(b.detach(), {2, 2, 2});
    fmt::print("a_shape {}\nb_shape {}\nout_shape {}\nb {}\n", join(a.shape()), join(b.shape()), join(out.shape()),
               numbers(b.detach()));
    fmt::print("b_expanded_shape {}\nb_expanded_strides {}\n", join(b_expanded.shape()), join(b_expanded.strides()));
    for (int64_t i = 0; i < 2; ++i) {
      const Tensor ai = select(a, 0, i);
      fmt::print("a{} {}\n", i, numbers(ai));
      fmt::print("part{} {}\n", i, numbers(matmul(transpose(ai, 0, 1), select(g, 0, i))));
    }
    fmt::print("grad_b {}\n", numbers(b.grad()));
    fmt::print("sum_to {}\n", numbers(kernels::sum_to(matmul(transpose(a, 1, 2), g), {2, 2})));
  } else if (what == "rope") {
    // one real vector of dh = 8 (4 pairs) at positions 0..5; base 100 so the slow pairs move visibly
    nn::RopeConfig config;
    config.head_dim = 8;
    config.base = 100.0;
    nn::RotaryEmbedding rope(config, DType::Float64);
    const Tensor x = tensor({1.0, 0.0, 0.8, 0.6, 0.0, 1.0, -0.6, 0.8}, {1, 8}, DType::Float64);
    const Tensor xs = contiguous(expand(x, {6, 8}));
    fmt::print("base {:g}\nfrequencies", config.base);
    for (double w : rope.frequencies()) fmt::print(" {:.6f}", w);
    fmt::print("\n");
    const Tensor y = rope.forward(xs, arange(int64_t{0}, int64_t{6}));
    for (int64_t p = 0; p < 6; ++p) fmt::print("position {} {}\n", p, numbers(select(y, 0, p), "{:.6f}"));
  } else if (what == "masks") {
    // uniform scores (q = k = 0), so each weight is 1 / (allowed keys of its row)
    const int64_t T = 6;
    const Tensor q = zeros({1, 1, T, 4}), kv = zeros({1, 1, T, 4});
    // a sequence of 4 tokens padded to 6: keys 4 and 5 are padding
    const Tensor padding = tensor_bool({true, true, true, true, false, false}, {1, 1, 1, T});
    struct Case {
      std::string name;
      bool causal;
      Tensor mask;
      int64_t nq, offset;
    };
    for (const Case& c : {Case{"causal", true, Tensor(), T, 0}, Case{"padding", false, padding, T, 0},
                          Case{"causal and padding", true, padding, T, 0},
                          Case{"causal, offset 4 (2 new queries, 6 keys)", true, Tensor(), 2, 4}}) {
      nn::AttentionOptions options;
      options.causal = c.causal;
      options.causal_offset = c.offset;
      options.mask = c.mask;
      Tensor weights;
      (void)nn::scaled_dot_product_attention(narrow(q, 2, T - c.nq, c.nq), kv, kv, options, &weights);
      fmt::print("mask {}\nsize {} {}\nweights {}\n", c.name, c.nq, T, numbers(weights, "{:.4f}"));
    }
  } else if (what == "tiles") {
    // causal tiled attention, T = 512, tiles of 64 queries x 128 keys: the products of the forward
    const int64_t T = 512, dh = 16, dv = 8;
    Generator gen(0);
    const Tensor q = randn({1, 1, T, dh}, kDefaultFloat, &gen), k = randn({1, 1, T, dh}, kDefaultFloat, &gen);
    const Tensor v = randn({1, 1, T, dv}, kDefaultFloat, &gen);
    nn::TileSizes tiles;
    nn::ScoreMask mask;
    mask.causal = true;
    std::vector<kernels::GemmCall> calls;
    {
      kernels::GemmTrace trace;
      (void)nn::dot_attention_tiled(q, k, v, 1.0 / std::sqrt(double(dh)), mask, tiles);
      calls = trace.calls();
    }
    fmt::print("T {}\ntile {} {}\n", T, tiles.query, tiles.key);
    // score tiles are (queries x dh) . (dh x keys): k = dh; the P v products have k = keys
    for (const auto& c : calls)
      if (c.k == dh && !c.accumulate) fmt::print("scores {} {}\n", c.m, c.n);
  } else if (what == "gram") {
    const Tensor q = tensor({2.0, 0.0, 0.0}, DType::Float64), r = tensor({0.8, 1.6, 0.0}, DType::Float64);
    const std::vector<std::pair<std::string, Tensor>> keys = {
        {"in the plane", tensor({1.2, 1.0, 0.0}, DType::Float64)},
        {"slightly off", tensor({2.0, 0.8, 0.5}, DType::Float64)},
        {"far off", tensor({0.4, 0.4, 1.4}, DType::Float64)}};
    fmt::print("q {}\nr {}\n", numbers(q), numbers(r));
    const double area2 = dot(q, q) * dot(r, r) - dot(r, q) * dot(r, q);
    fmt::print("area2 {:.4f}\n", area2);
    for (const auto& [name, k] : keys) {
      const Tensor X = stack({q, k, r});                   // (3, 3), rows q, k, r
      const Tensor G = matmul(X, transpose(X, 0, 1));      // the Gram matrix
      const std::vector<double> g = G.to_vector<double>();
      const double det = g[0] * (g[4] * g[8] - g[5] * g[7]) - g[1] * (g[3] * g[8] - g[5] * g[6]) +
                         g[2] * (g[3] * g[7] - g[4] * g[6]);
      fmt::print("key {}\nk {}\ndet {:.4f}\nheight2 {:.4f}\n", name, numbers(k), det, det / area2);
    }
  } else if (what == "bpe") {
    // the example of Sennrich et al. (2016), as CS336 uses it: a real training run
    const std::string corpus =
        "low low low low low lower lower widest widest widest newest newest newest newest newest newest";
    const tok::BpeModel model = tok::train_bpe(corpus, 256 + 1 + 6, {"<|endoftext|>"});
    std::vector<tok::Word> words = tok::pretoken_words(corpus, {"<|endoftext|>"});
    const auto show = [&](const tok::Word& w) {
      std::string out;
      for (size_t i = 0; i < w.ids.size(); ++i) {
        std::string piece = model.vocab[w.ids[i]];
        for (char& ch : piece)
          if (ch == ' ') ch = '_';
        if (i) out += '|';
        out += piece;
      }
      return out;
    };
    const auto state = [&](const std::string& label) {
      fmt::print("{}", label);
      for (const auto& w : words) fmt::print(" {}x{}", w.count, show(w));
      fmt::print("\n");
    };
    state("start");
    int32_t id = 256 + 1;
    for (const auto& [left, right] : model.merges) {
      std::string l = model.vocab[left], r = model.vocab[right];
      for (std::string* s : {&l, &r})
        for (char& ch : *s)
          if (ch == ' ') ch = '_';
      for (auto& w : words) tok::merge_pair_in_word(w.ids, left, right, id);
      state(fmt::format("merge {} {} {}", l, r, id));
      ++id;
    }
  } else {
    std::cerr << "usage: snippet_figure_data views | broadcast-matmul | rope | masks | tiles | gram | bpe\n";
    return 2;
  }
  return 0;
}
