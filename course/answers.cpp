// course-answer: the library computes the answers of the book's problems.
//
//   course-answer ID                   the expected answer of problem ID (course/problems.txt), one line
//   course-answer ID --variant NAME    the value a catalogued mistake gives (the registry's `mistake: variant`)
//   course-answer --explain ID         the answer, how the library computed it, and its intermediate values
//   course-answer --list               the ids this program computes
//
// scripts/course_problems.py compares a learner's answer with what this program prints, so an answer
// is computed by the tree it runs in and cannot drift from the library. In a workspace the library
// is the learner's: an answer that runs an exercise still stubbed there exits with status 3 and
// names the exercise. Each problem's function states what it computes; the chapters' worked
// solutions show `--explain` (the docs test reruns it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "autograd/engine.h"
#include "course/tool_options.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/accounting.h"
#include "nn/attention.h"
#include "io/checkpoint.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "optim/optim.h"
#include "nn/rope.h"
#include "io/safetensors.h"
#include "optim/schedule.h"
#include "tasks/batch.h"
#include "io/token_memmap.h"
#include "nn/transformer.h"
#include "nn/triple_attention.h"
#include "nn/w2_attention.h"
#include "train/dp_settings.h"
#include "train/dp_simulate.h"
#include "tokenizer/bpe_train.h"
#include "tokenizer/pretokenize.h"
#include "tensor/exercise.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tensor/random.h"
#include "tensor/storage.h"

using namespace ropegrad;

namespace {

// What a problem's function returns: the canonical text course_problems.py parses (an integer, a
// number printed with 17 significant digits, integers separated by spaces, or a text), and how
// --explain shows it.
struct Value {
  std::string text;
  std::string shown;
};

// 1234567 -> "1,234,567"
std::string grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

Value integer(int64_t v) { return {fmt::format("{}", v), grouped(v)}; }
// A number shows 7 significant digits, a whole one below 10^15 all its digits, grouped.
Value number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return {fmt::format("{:.17g}", v), grouped(static_cast<int64_t>(v))};
  return {fmt::format("{:.17g}", v), fmt::format("{:.7g}", v)};
}
Value ints(const std::vector<int64_t>& v) {
  std::string text, shown = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    text += (i ? " " : "") + std::to_string(v[i]);
    shown += (i ? ", " : "") + std::to_string(v[i]);
  }
  return {text, shown + "]"};
}
Value text(const std::string& v) { return {v, v}; }

// Intermediate values --explain prints under the answer.
struct Steps {
  std::vector<std::string> lines;
  void add(const std::string& name, const std::string& value) { lines.push_back(name + ": " + value); }
  void add(const std::string& name, double v) { add(name, fmt::format("{:.7g}", v)); }
  void add_int(const std::string& name, int64_t v) { add(name, grouped(v)); }
};

using Fn = std::function<Value(Steps&)>;

struct Problem {
  std::string id;
  std::string how;  // what of the library computes it
  Fn value;
  std::map<std::string, Fn> variants;
};

std::vector<Problem>& registry() {
  static std::vector<Problem> problems;
  return problems;
}

struct Add {
  Add(std::string id, std::string how, Fn value, std::map<std::string, Fn> variants = {}) {
    registry().push_back({std::move(id), std::move(how), std::move(value), std::move(variants)});
  }
};

double item(const Tensor& t) { return t.item<double>(); }
double at(const Tensor& t, std::initializer_list<int64_t> index) { return t.at<double>(index); }
std::vector<int64_t> shape_vector(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }
Tensor leaf(std::initializer_list<double> values) { return tensor(values, DType::Float64).requires_grad_(); }

// gradcheck, with a stub reached by a backward (which gradcheck reports as an error of the
// backward) rethrown as the stub's NotImplemented: the answer is blocked, not wrong.
GradcheckResult checked_gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                                  const GradcheckOptions& options = {}) {
  GradcheckResult r = gradcheck(f, inputs, options);
  const size_t at = r.report.find("not implemented: ex");
  if (!r.passed && at != std::string::npos) {
    const size_t begin = at + std::string("not implemented: ").size();
    const size_t end = r.report.find_first_of(" (\n", begin);
    throw NotImplemented(r.report.substr(begin, end - begin), "reached by gradcheck's backward", "its chapter");
  }
  return r;
}

// ---- 1. Tensors ------------------------------------------------------------------------------------

const Add ch01_permute_strides(
    "ch01-permute-strides", "kernels::permute(zeros({2, 3, 4, 5}), {2, 0, 3, 1}).strides()",
    [](Steps& s) {
      const Tensor x = zeros({2, 3, 4, 5});
      s.add("contiguous strides of [2, 3, 4, 5]", ints(shape_vector(x.strides())).shown);
      const Tensor p = kernels::permute(x, {2, 0, 3, 1});
      s.add("permuted shape", ints(shape_vector(p.shape())).shown);
      return ints(shape_vector(p.strides()));
    },
    {{"fresh", [](Steps&) {
        // the strides of a new contiguous tensor of the permuted shape
        return ints(shape_vector(zeros({4, 2, 5, 3}).strides()));
      }}});

const Add ch01_storage_index(
    "ch01-storage-index",
    "the value of y[1, 2, 1], y = slice(transpose(view(arange(60), {3, 4, 5}), 0, 2), 0, 1, 5, 2): arange's "
    "value is its storage index",
    [](Steps& s) {
      const Tensor x = kernels::view(arange(int64_t{60}), {3, 4, 5});
      const Tensor y = kernels::slice(kernels::transpose(x, 0, 2), 0, 1, 5, 2);
      s.add("y: shape", ints(shape_vector(y.shape())).shown);
      s.add("y: strides", ints(shape_vector(y.strides())).shown);
      s.add_int("y: offset", y.offset());
      return integer(static_cast<int64_t>(at(y, {1, 2, 1})));
    });

const Add ch01_broadcast_shape("ch01-broadcast-shape", "broadcast_shapes([8, 1, 6, 1], [7, 1, 5])", [](Steps&) {
  return ints(shape_vector(broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}, "add")));
});

const Add ch01_float32_sum(
    "ch01-float32-sum", "a float accumulator, 20,000,000 additions of 1.0f",
    [](Steps& s) {
      volatile float total = 0.0f;  // volatile: the compiler may not fold or reorder the loop
      for (int i = 0; i < 20'000'000; ++i) total = total + 1.0f;
      s.add("ropegrad sum of the same 20,000,000 ones (accumulated in double)",
            fmt::format("{:.0f}", item(kernels::reduce(kernels::Reduce::Sum, ones({20'000'000}), {}, false))));
      return integer(static_cast<int64_t>(total));
    },
    {{"exact", [](Steps&) { return integer(20'000'000); }}});

// The largest float32 x whose exp, computed by the library in float32, is finite: bisection over
// the float32 numbers (ordered like their bit patterns for positive floats).
float largest_finite_exp_f32() {
  auto finite = [](float x) {
    return std::isfinite(item(kernels::unary(kernels::Unary::Exp, full({1}, x, DType::Float32))));
  };
  uint32_t lo, hi;
  const float a = 1.0f, b = 1000.0f;
  std::memcpy(&lo, &a, 4);
  std::memcpy(&hi, &b, 4);
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    float x;
    std::memcpy(&x, &mid, 4);
    (finite(x) ? lo : hi) = mid;
  }
  float x;
  std::memcpy(&x, &lo, 4);
  return x;
}

const Add ch01_exp_overflow(
    "ch01-exp-overflow", "bisection over float32 numbers with the library's float32 exp",
    [](Steps& s) {
      const float x = largest_finite_exp_f32();
      s.add("exp of it (float32)", item(kernels::unary(kernels::Unary::Exp, full({1}, x, DType::Float32))));
      s.add("ln of float32's largest finite number", std::log(static_cast<double>(std::numeric_limits<float>::max())));
      return number(x);
    },
    {{"float64", [](Steps&) { return number(std::log(std::numeric_limits<double>::max())); }}});

// ---- 2. Autograd -------------------------------------------------------------------------------------

const Add ch02_broadcast_grad(
    "ch02-broadcast-grad",
    "backward of sum((W + b) * (W + b)), W = view(arange(12), {4, 3}), b = [1, -2, 3], float64: b.grad[2]",
    [](Steps& s) {
      const Tensor W = kernels::view(arange(0.0, 12.0, 1.0, DType::Float64), {4, 3}).requires_grad_();
      const Tensor b = leaf({1.0, -2.0, 3.0});
      const Tensor u = W + b;
      backward(sum(u * u));
      s.add("b.grad", fmt::format("[{}, {}, {}]", at(b.grad(), {0}), at(b.grad(), {1}), at(b.grad(), {2})));
      return integer(std::llround(at(b.grad(), {2})));
    });

const Add ch02_pow_exponent(
    "ch02-pow-exponent", "backward of pow(x, y) for float64 leaves x = 2, y = 3: y.grad",
    [](Steps& s) {
      const Tensor x = leaf({2.0});
      const Tensor y = leaf({3.0});
      backward(pow(x, y));  // a one-element root: the gradient defaults to 1
      s.add("x.grad", item(x.grad()));
      return number(item(y.grad()));
    },
    {{"dx", [](Steps&) {
        const Tensor x = leaf({2.0});
        const Tensor y = leaf({3.0});
        backward(pow(x, y));
        return number(item(x.grad()));
      }}});

const Add ch02_softmax_vjp(
    "ch02-softmax-vjp",
    "y = exp(x) / sum(exp(x)) built from autograd ops, x = (0, ln 2, ln 3) float64; backward of y[0]: x.grad[2]",
    [](Steps& s) {
      const Tensor x = leaf({0.0, std::log(2.0), std::log(3.0)});
      const Tensor e = exp(x);
      const Tensor y = e / sum(e);
      s.add("y", fmt::format("[{:.6f}, {:.6f}, {:.6f}]", at(y, {0}), at(y, {1}), at(y, {2})));
      backward(select(y, 0, 0));
      s.add("x.grad", fmt::format("[{:.6f}, {:.6f}, {:.6f}]", at(x.grad(), {0}), at(x.grad(), {1}),
                                  at(x.grad(), {2})));
      return number(at(x.grad(), {2}));
    },
    {{"diagonal", [](Steps&) { return number(0.0); }}});

const Add ch02_accumulate(
    "ch02-accumulate", "three backward(sum(x * x)) on one leaf x = [1, 2, 3] without zeroing: x.grad[2]",
    [](Steps& s) {
      const Tensor x = leaf({1.0, 2.0, 3.0});
      for (int i = 1; i <= 3; ++i) {
        backward(sum(x * x));
        s.add(fmt::format("x.grad[2] after backward {}", i), at(x.grad(), {2}));
      }
      return integer(std::llround(at(x.grad(), {2})));
    });

// ---- 3. matmul -----------------------------------------------------------------------------------------

int64_t gemms_of(const Tensor& a, const Tensor& b) {
  kernels::GemmTrace trace;
  kernels::matmul(a, b);
  int64_t n = 0;
  for (const auto& call : trace.calls()) n += call.count;
  return n;
}

const Add ch03_batched_shape("ch03-batched-shape", "kernels::matmul(zeros({3, 1, 4, 6}), zeros({2, 6, 5})).shape()",
                             [](Steps&) {
                               return ints(shape_vector(
                                   kernels::matmul(zeros({3, 1, 4, 6}), zeros({2, 6, 5})).shape()));
                             });

const Add ch03_gemm_count(
    "ch03-gemm-count",
    "a GemmTrace around kernels::matmul(a, b), b (5, 6): a contiguous (2, 3, 4, 5), then a = permute of a "
    "contiguous (3, 2, 4, 5) by (1, 0, 2, 3); the products handed to BLAS",
    [](Steps&) {
      const Tensor b = ones({5, 6});
      const Tensor a1 = ones({2, 3, 4, 5});
      const Tensor a2 = kernels::permute(ones({3, 2, 4, 5}), {1, 0, 2, 3});
      return ints({gemms_of(a1, b), gemms_of(a2, b)});
    });

const Add ch03_linear_flops(
    "ch03-linear-flops",
    "2 m n k for the forward (m = B T), plus the backward's two products of the same size (dX, dW)",
    [](Steps& s) {
      const double m = 8.0 * 512, k = 768, n = 3072;
      s.add("forward, 2 m n k", 2 * m * n * k);
      s.add("backward, dX and dW", 2 * 2 * m * n * k);
      return number(3 * 2 * m * n * k);
    });

int64_t temporary_bytes(const Tensor& A, const Tensor& B) {
  const int64_t before = memory_stats().current_bytes;
  reset_peak_memory();
  const Tensor C = kernels::matmul(A, B);
  return memory_stats().peak_bytes - before - C.numel() * static_cast<int64_t>(element_size(C.dtype()));
}

const Add ch03_copy_bytes(
    "ch03-copy-bytes",
    "memory_stats() around kernels::matmul(slice(t, 1, 0, 128, 2), B), t float32 (96, 128), B (64, 32): the "
    "peak beyond the output",
    [](Steps& s) {
      const Tensor t = ones({96, 128});
      const Tensor B = ones({64, 32});
      const Tensor A = kernels::slice(t, 1, 0, 128, 2);
      s.add("A: shape", ints(shape_vector(A.shape())).shown);
      s.add("A: strides", ints(shape_vector(A.strides())).shown);
      s.add_int("narrow(t, 1, 0, 64) instead: temporary bytes", temporary_bytes(kernels::narrow(t, 1, 0, 64), B));
      return integer(temporary_bytes(A, B));
    },
    {{"none", [](Steps&) { return integer(0); }}});

// ---- 4. Gradient checking --------------------------------------------------------------------------------

// The largest eps at which gradcheck of exp at x = 3 passes (float64), by bisection on eps.
double largest_passing_eps(double atol, double rtol) {
  auto passes = [&](double eps) {
    GradcheckOptions o;
    o.eps = eps;
    o.atol = atol;
    o.rtol = rtol;
    return checked_gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {leaf({3.0})}, o).passed;
  };
  double lo = 1e-6, hi = 1.0;  // passes at lo, fails at hi
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    (passes(mid) ? lo : hi) = mid;
  }
  return lo;
}

const Add ch04_best_eps(
    "ch04-best-eps", "the minimum of eps^2/6 |f'''| + u |f| / eps for f = exp (f''' = f), u = 2^-53",
    [](Steps& s) {
      const double u = std::ldexp(1.0, -53);
      s.add("u", u);
      return number(std::cbrt(3 * u));
    });

const Add ch04_largest_eps(
    "ch04-largest-eps", "bisection on eps with gradcheck(exp, x = 3) at atol 1e-5, rtol 1e-3 (autograd/gradcheck.h)",
    [](Steps& s) {
      s.add("e^3 (the derivative)", std::exp(3.0));
      s.add("atol + rtol e^3", 1e-5 + 1e-3 * std::exp(3.0));
      return number(largest_passing_eps(1e-5, 1e-3));
    },
    {{"atol-only", [](Steps&) { return number(largest_passing_eps(1e-5, 0.0)); }}});

const Add ch04_float32_step(
    "ch04-float32-step", "(1000 + 0.001) - 1000 with both operations in float32, the library's add and sub",
    [](Steps& s) {
      const Tensor x = full({1}, 1000.0, DType::Float32);
      const Tensor up = kernels::binary(kernels::Binary::Add, x, 1e-3);
      s.add("1000 + 0.001 in float32", fmt::format("{:.10g}", item(up)));
      s.add("float32 spacing at 1000", std::ldexp(1.0, 9 - 23));
      return number(item(kernels::binary(kernels::Binary::Sub, up, x)));
    },
    {{"exact", [](Steps&) { return number(1e-3); }}});

const Add ch04_kink(
    "ch04-kink", "gradcheck(abs, x = 3e-7): its report's numerical derivative (eps = 1e-6)",
    [](Steps& s) {
      const GradcheckResult r =
          gradcheck([](const std::vector<Tensor>& in) { return abs(in[0]); }, {leaf({3e-7})});
      if (r.worst.empty()) throw Error("ch04-kink: gradcheck passed where it should fail");
      s.add("analytical", r.worst[0].analytical);
      return number(r.worst[0].numerical);
    },
    {{"analytical", [](Steps&) { return number(1.0); }}});

const Add ch04_evaluations(
    "ch04-evaluations",
    "a counter in f(x, w) = x * w, x (4, 3), w (3), float64: the calls gradcheck makes with grad mode off",
    [](Steps& s) {
      int64_t numerical = 0, with_grad = 0;
      Generator gen(4);
      const GradcheckResult r = checked_gradcheck(
          [&](const std::vector<Tensor>& in) {
            ++(grad_enabled() ? with_grad : numerical);
            return in[0] * in[1];
          },
          {randn({4, 3}, DType::Float64, &gen).requires_grad_(), randn({3}, DType::Float64, &gen).requires_grad_()});
      if (!r.passed) throw Error("ch04-evaluations: gradcheck failed");
      s.add_int("calls with grad mode on (the graph the backward passes use)", with_grad);
      return integer(numerical);
    });

// ---- 5. Modules and initialisation ---------------------------------------------------------------

// The model of ch05-tied-count and ch05-state-keys: an embedding, three blocks and a tied head.
struct Block5 : nn::Module {
  std::shared_ptr<nn::RMSNorm> norm;
  std::shared_ptr<nn::Linear> proj;
  Block5() {
    norm = register_module("norm", std::make_shared<nn::RMSNorm>(64));
    proj = register_module("proj", std::make_shared<nn::Linear>(64, 64));
    register_buffer("mask", ones({64}), /*persistent=*/true);
    register_buffer("scratch", zeros({64}), /*persistent=*/false);
  }
  std::string type_name() const override { return "Block"; }
};
struct Head5 : nn::Module {
  Tensor weight;
  explicit Head5(const Tensor& tied) { weight = register_parameter("weight", tied); }
  std::string type_name() const override { return "Head"; }
};
struct Model5 : nn::Module {
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::ModuleList<Block5>> layers;
  std::shared_ptr<Head5> head;
  Model5() {
    emb = register_module("emb", std::make_shared<nn::Embedding>(1000, 64));
    layers = register_module("layers", std::make_shared<nn::ModuleList<Block5>>());
    for (int i = 0; i < 3; ++i) layers->push_back(std::make_shared<Block5>());
    head = register_module("head", std::make_shared<Head5>(emb->weight));
  }
  std::string type_name() const override { return "Model"; }
};

const Add ch05_tied_count(
    "ch05-tied-count", "Model.num_parameters(): Embedding(1000, 64), 3 x (RMSNorm(64), Linear(64, 64)), a head tied to the embedding",
    [](Steps& s) {
      Model5 m;
      s.add_int("the embedding", m.emb->num_parameters());
      s.add_int("one block", (*m.layers)[0].num_parameters());
      return integer(m.num_parameters());
    },
    {{"untied", [](Steps&) {
        Model5 m;
        return integer(m.num_parameters() + m.emb->num_parameters());
      }},
     {"buffers", [](Steps&) {
        Model5 m;
        return integer(m.num_parameters() + 3 * 64);
      }}});

const Add ch05_state_keys(
    "ch05-state-keys", "Model.state_dict().size() for the model of ch05-tied-count, each block with a persistent buffer 'mask' and a non-persistent 'scratch'",
    [](Steps& s) {
      Model5 m;
      std::string keys;
      for (const auto& [name, t] : m.state_dict()) keys += (keys.empty() ? "" : " ") + name;
      s.add("keys", keys);
      return integer(static_cast<int64_t>(m.state_dict().size()));
    },
    {{"with-scratch", [](Steps&) {
        Model5 m;
        return integer(static_cast<int64_t>(m.state_dict().size()) + 3);
      }},
     {"head-once", [](Steps&) {
        Model5 m;
        return integer(static_cast<int64_t>(m.state_dict().size()) - 1);
      }}});

// ---- 6. Linear and Embedding -------------------------------------------------------------------------

const Add ch06_linear_dw(
    "ch06-linear-dw", "Linear(3, 2) in float64 loaded with W, y = forward(x), backward with dL/dy = c: weight.grad",
    [](Steps& s) {
      nn::Linear lin(3, 2, nullptr, DType::Float64);
      lin.load_state_dict({{"weight", tensor({1.0, 0.0, -1.0, 2.0, 1.0, 0.0}, {2, 3}, DType::Float64)}});
      const Tensor x = tensor({1.0, 2.0, 3.0, 0.0, 1.0, -1.0}, {2, 3}, DType::Float64);
      const Tensor c = tensor({1.0, 2.0, 1.0, 2.0}, {2, 2}, DType::Float64);
      const Tensor y = lin.forward(x);
      s.add("y", fmt::format("[[{}, {}], [{}, {}]]", at(y, {0, 0}), at(y, {0, 1}), at(y, {1, 0}), at(y, {1, 1})));
      backward(y, c);  // dL/dy = c: every row (1, 2)
      const Tensor g = lin.weight.grad();
      std::vector<int64_t> out;
      for (int64_t i = 0; i < 2; ++i) {
        for (int64_t j = 0; j < 3; ++j) out.push_back(std::llround(at(g, {i, j})));
      }
      return ints(out);
    });

const Add ch06_embedding_grad(
    "ch06-embedding-grad", "Embedding(4, 3) in float64, ids [[2, 0, 2], [2, 1, 0]], backward with dL/dE(ids) = w, w[b, t, :] = t + 1: weight.grad[2, 0]",
    [](Steps& s) {
      nn::Embedding emb(4, 3, nullptr, DType::Float64);
      const Tensor ids = tensor_i64({2, 0, 2, 2, 1, 0}, {2, 3});
      std::vector<double> w;
      for (int b = 0; b < 2; ++b) {
        for (int t = 0; t < 3; ++t) {
          for (int d = 0; d < 3; ++d) w.push_back(t + 1.0);
        }
      }
      backward(emb.forward(ids), tensor(w, {2, 3, 3}, DType::Float64));  // dL/dE(ids) = w
      const Tensor g = emb.weight.grad();
      for (int64_t v = 0; v < 4; ++v) s.add(fmt::format("weight.grad[{}, 0]", v), at(g, {v, 0}));
      return integer(std::llround(at(g, {2, 0})));
    },
    {{"assigned", [](Steps&) { return integer(1); }}});

// ---- 7. RMSNorm ------------------------------------------------------------------------------------------

const Add ch07_small_row(
    "ch07-small-row", "rms_norm(x, ones(4)) in float64 for x = (2e-3, 2e-3, -2e-3, -2e-3), eps 1e-5: y[0]",
    [](Steps&) {
      const Tensor x = tensor({2e-3, 2e-3, -2e-3, -2e-3}, {1, 4}, DType::Float64);
      return number(at(nn::rms_norm(x, ones({4}, DType::Float64)), {0, 0}));
    },
    {{"eps-outside", [](Steps&) { return number(2e-3 / (2e-3 + 1e-5)); }}});

// dx of rms_norm for x = (1, 2, 3, 4), unit gain, dy = (1, 0, 0, 0), float64.
Tensor rms_dx() {
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, {1, 4}, DType::Float64).requires_grad_();
  backward(select(select(nn::rms_norm(x, ones({4}, DType::Float64)), 0, 0), 0, 0));
  return x.grad();
}

const Add ch07_backward_entry(
    "ch07-backward-entry", "rms_norm(x, ones(4)), x = (1, 2, 3, 4) float64, backward of y[0]: x.grad[1]",
    [](Steps& s) {
      const Tensor dx = rms_dx();
      s.add("x.grad", fmt::format("[{:.6f}, {:.6f}, {:.6f}, {:.6f}]", at(dx, {0, 0}), at(dx, {0, 1}), at(dx, {0, 2}),
                                  at(dx, {0, 3})));
      return number(at(dx, {0, 1}));
    },
    {{"no-mean-term", [](Steps&) { return number(0.0); }}});

const Add ch07_scale_invariance(
    "ch07-scale-invariance", "sum(x * x.grad) for the gradient of ch07-backward-entry",
    [](Steps& s) {
      const Tensor dx = rms_dx();
      double dot = 0;
      for (int64_t j = 0; j < 4; ++j) dot += (j + 1.0) * at(dx, {0, j});
      s.add("ms", 7.5);
      return number(dot);
    },
    {{"zero", [](Steps&) { return number(0.0); }}});

const Add ch07_saved_bytes(
    "ch07-saved-bytes", "memory_stats() around rms_norm(x, g), x float32 (16, 128, 512) and g requiring grad: bytes held beyond the output",
    [](Steps& s) {
      const Tensor x = ones({16, 128, 512}).requires_grad_();
      const Tensor g = ones({512}).requires_grad_();
      const int64_t before = memory_stats().current_bytes;
      const Tensor y = nn::rms_norm(x, g);
      const int64_t held = memory_stats().current_bytes - before;
      s.add_int("bytes held after the forward", held);
      s.add_int("of which the output y", y.numel() * 4);
      return integer(held - y.numel() * 4);
    });

// ---- 8. SwiGLU ----------------------------------------------------------------------------------------------

const Add ch08_dff(
    "ch08-dff", "SwiGLU::default_d_ff(896)", [](Steps& s) {
      s.add("8/3 D", 8.0 * 896 / 3);
      return integer(nn::SwiGLU::default_d_ff(896));
    },
    {{"unrounded", [](Steps&) { return integer((8 * 896 + 2) / 3); }},
     {"down", [](Steps&) { return integer((8 * 896 + 2) / 3 / 64 * 64); }}});

double silu_grad_at(double z) {
  const Tensor x = leaf({z});
  backward(silu(x));
  return item(x.grad());
}

const Add ch08_silu_prime(
    "ch08-silu-prime", "backward of silu(z) at z = 2 (float64): z.grad", [](Steps& s) {
      s.add("sigma(2)", 1 / (1 + std::exp(-2.0)));
      return number(silu_grad_at(2.0));
    },
    {{"sigmoid", [](Steps&) { return number(1 / (1 + std::exp(-2.0))); }}});

// Where SiLU' changes sign on [-3, -0.5], by bisection on the library's gradient.
double silu_argmin() {
  double lo = -3.0, hi = -0.5;  // SiLU' < 0 at lo, > 0 at hi
  for (int i = 0; i < 80; ++i) {
    const double mid = (lo + hi) / 2;
    (silu_grad_at(mid) < 0 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

const Add ch08_silu_min(
    "ch08-silu-min", "silu at the zero of its gradient, found by bisection on the library's backward (float64)",
    [](Steps& s) {
      const double z = silu_argmin();
      s.add("z where SiLU'(z) = 0", z);
      return number(item(silu(leaf({z}))));
    },
    {{"location", [](Steps&) { return number(silu_argmin()); }}});

const Add ch08_param_gap(
    "ch08-param-gap", "nn::feed_forward_parameters(SwiGLU, 320) - feed_forward_parameters(SiLU, 320), default widths",
    [](Steps& s) {
      const int64_t swiglu = nn::feed_forward_parameters(nn::FeedForwardKind::SwiGLU, 320);
      const int64_t silu_ffn = nn::feed_forward_parameters(nn::FeedForwardKind::SiLU, 320);
      s.add_int("SwiGLU, d_ff " + std::to_string(nn::feed_forward_width(nn::FeedForwardKind::SwiGLU, 320)), swiglu);
      s.add_int("SiLU, d_ff " + std::to_string(nn::feed_forward_width(nn::FeedForwardKind::SiLU, 320)), silu_ffn);
      return integer(swiglu - silu_ffn);
    });

// ---- 9. RoPE, real form ----------------------------------------------------------------------------------

nn::RopeConfig rope_config(int64_t head_dim, double base = 10000.0) {
  nn::RopeConfig c;
  c.head_dim = head_dim;
  c.base = base;
  return c;
}

const Add ch09_slowest_period(
    "ch09-slowest-period", "2 pi / the last of RotaryEmbedding({head_dim 96, base 500000}).frequencies()",
    [](Steps& s) {
      nn::RotaryEmbedding rope(rope_config(96, 500000.0), DType::Float64);
      s.add("slowest frequency", rope.frequencies().back());
      return number(2 * std::numbers::pi / rope.frequencies().back());
    },
    {{"inverse-base", [](Steps&) { return number(2 * std::numbers::pi * 500000.0); }}});

const Add ch09_distinct_scores(
    "ch09-distinct-scores", "RotaryEmbedding(head_dim 8) on a random q and k (float64) at positions 0..9: distinct values of the 100 scores, to 1e-9",
    [](Steps&) {
      Generator gen(7);
      nn::RotaryEmbedding rope(rope_config(8), DType::Float64);
      const Tensor q = kernels::contiguous(kernels::expand(randn({1, 8}, DType::Float64, &gen), {10, 8}));
      const Tensor k = kernels::contiguous(kernels::expand(randn({1, 8}, DType::Float64, &gen), {10, 8}));
      const Tensor scores = kernels::matmul(rope.forward(q), kernels::transpose(rope.forward(k, Tensor(), true), 0, 1));
      std::vector<double> v;
      for (int64_t m = 0; m < 10; ++m) {
        for (int64_t n = 0; n < 10; ++n) v.push_back(at(scores, {m, n}));
      }
      std::sort(v.begin(), v.end());
      int64_t distinct = 1;
      for (size_t i = 1; i < v.size(); ++i) {
        if (v[i] - v[i - 1] > 1e-9 * std::max(1.0, std::abs(v[i]))) ++distinct;
      }
      return integer(distinct);
    },
    {{"all", [](Steps&) { return integer(100); }}});

double rope_first(nn::RopePairing pairing) {
  nn::RopeConfig c = rope_config(4);
  c.pairing = pairing;
  nn::RotaryEmbedding rope(c, DType::Float64);
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0}, {2, 4}, DType::Float64);
  return at(rope.forward(x), {1, 0});  // row 1: position 1
}

const Add ch09_interleaved(
    "ch09-interleaved", "RotaryEmbedding({head_dim 4}) (interleaved) on x = (1, 2, 3, 4) at position 1, float64: y[0]",
    [](Steps&) { return number(rope_first(nn::RopePairing::Interleaved)); },
    {{"half-split", [](Steps&) { return number(rope_first(nn::RopePairing::HalfSplit)); }}});

const Add ch09_table_growth(
    "ch09-table-growth", "RotaryEmbedding({head_dim 8, max_seq_len 16}): forward at position 40, then at 70; cached_length()",
    [](Steps& s) {
      nn::RopeConfig c = rope_config(8);
      c.max_seq_len = 16;
      nn::RotaryEmbedding rope(c, DType::Float64);
      const Tensor x = ones({1, 8}, DType::Float64);
      rope.forward(x, tensor_i64({40}));
      s.add_int("after position 40", rope.cached_length());
      rope.forward(x, tensor_i64({70}));
      return integer(rope.cached_length());
    },
    {{"no-doubling", [](Steps&) { return integer(71); }}});

// ---- 10. RoPE, complex form ---------------------------------------------------------------------------------

double complex_grad_im(bool conjugate) {
  const Tensor a = tensor({1.0, 2.0}, {1, 2}, DType::Float64).requires_grad_();
  const Tensor b = tensor({3.0, conjugate ? -1.0 : 1.0}, {1, 2}, DType::Float64);
  backward(nn::complex_mul(a, b), tensor({1.0, 2.0}, {1, 2}, DType::Float64));
  return at(a.grad(), {0, 1});
}

const Add ch10_complex_grad(
    "ch10-complex-grad", "complex_mul(a, b), a = 1 + 2i, b = 3 - i (float64 pairs); backward with dL/dz = (1, 2): Im of a.grad",
    [](Steps& s) {
      const Tensor a = tensor({1.0, 2.0}, {1, 2}, DType::Float64).requires_grad_();
      const Tensor b = tensor({3.0, -1.0}, {1, 2}, DType::Float64);
      backward(nn::complex_mul(a, b), tensor({1.0, 2.0}, {1, 2}, DType::Float64));  // dL/dz = 1 + 2i
      s.add("Re of a.grad", at(a.grad(), {0, 0}));
      return number(at(a.grad(), {0, 1}));
    },
    {{"no-conjugate", [](Steps&) {
        // g b instead of g conj(b): the gradient the product rule gives without the conjugate
        return number(complex_grad_im(false));
      }}});

// q = k = (1, 0) (one pair, omega 1): the query rotated at m = 2; the key at n = 1 rotated by e^{+in}
// (RoPE) or e^{-in} (the conjugate phase); the real dot product.
double phase_score(bool conjugate_key) {
  nn::RotaryEmbedding rope(rope_config(2), DType::Float64);
  const Tensor q = rope.forward_complex(tensor({1.0, 0.0}, {1, 2}, DType::Float64), tensor_i64({2}));
  const double n = 1.0;
  const Tensor phase = tensor({std::cos(n), conjugate_key ? -std::sin(n) : std::sin(n)}, {1, 1, 2}, DType::Float64);
  const Tensor k = nn::view_as_real(nn::complex_mul(nn::view_as_complex(tensor({1.0, 0.0}, {1, 2}, DType::Float64)), phase));
  return item(sum(q * k));
}

const Add ch10_conj_score(
    "ch10-conj-score", "RotaryEmbedding::forward_complex for q at m = 2; complex_mul by e^{-i n} for k at n = 1; the dot product",
    [](Steps& s) {
      s.add("RoPE's score, the key rotated by e^{+i n}", phase_score(false));
      return number(phase_score(true));
    },
    {{"rope", [](Steps&) { return number(phase_score(false)); }}});

const Add ch10_complex_strides(
    "ch10-complex-strides", "view_as_complex(narrow(zeros({2, 3, 8}), -1, 2, 6)).strides()",
    [](Steps& s) {
      const Tensor x = kernels::narrow(zeros({2, 3, 8}), -1, 2, 6);
      const Tensor z = nn::view_as_complex(x);
      s.add("shape", ints(shape_vector(z.shape())).shown);
      s.add_int("offset", z.offset());
      return ints(shape_vector(z.strides()));
    });

// ---- 11. Context extension ------------------------------------------------------------------------------------

nn::RotaryEmbedding scaled_rope(int64_t head_dim, nn::RopeScaling scaling, double factor, int64_t original = 512) {
  nn::RopeConfig c = rope_config(head_dim);
  c.scaling = scaling;
  c.factor = factor;
  c.original_max_seq_len = original;
  return nn::RotaryEmbedding(c, DType::Float64);
}

const Add ch11_ntk_base(
    "ch11-ntk-base", "RotaryEmbedding({head_dim 128, NTK, factor 8}).frequencies()[1]^(-128/2): the base behind the frequencies",
    [](Steps& s) {
      const nn::RotaryEmbedding rope = scaled_rope(128, nn::RopeScaling::NTK, 8);
      s.add("slowest pair's factor, omega'/omega", rope.frequencies().back() /
                                                       nn::RotaryEmbedding(rope_config(128), DType::Float64).frequencies().back());
      return number(std::pow(rope.frequencies()[1], -64.0));
    },
    {{"times-s", [](Steps&) { return number(10000.0 * 8); }}});

const Add ch11_yarn_logit(
    "ch11-yarn-logit", "RotaryEmbedding({head_dim 64, YaRN, factor 16}).table_scale() squared",
    [](Steps& s) {
      const nn::RotaryEmbedding rope = scaled_rope(64, nn::RopeScaling::YaRN, 16);
      s.add("table_scale()", rope.table_scale());
      return number(rope.table_scale() * rope.table_scale());
    },
    {{"table-scale", [](Steps&) { return number(scaled_rope(64, nn::RopeScaling::YaRN, 16).table_scale()); }}});

int64_t yarn_kept(int64_t original) {
  const nn::RotaryEmbedding yarn = scaled_rope(64, nn::RopeScaling::YaRN, 4, original);
  const nn::RotaryEmbedding plain(rope_config(64), DType::Float64);
  int64_t kept = 0;
  for (size_t k = 0; k < plain.frequencies().size(); ++k) kept += yarn.frequencies()[k] == plain.frequencies()[k];
  return kept;
}

const Add ch11_yarn_kept(
    "ch11-yarn-kept", "pairs whose frequency RotaryEmbedding({head_dim 64, YaRN, factor 4, original_max_seq_len 1024}) leaves unchanged",
    [](Steps&) { return integer(yarn_kept(1024)); }, {{"original-512", [](Steps&) { return integer(yarn_kept(512)); }}});

// The score of q = k = e_16 (pair 8's first dim) with the query at 1024 and the key at 0.
double pair8_score(nn::RopeScaling scaling) {
  nn::RotaryEmbedding rope = scaled_rope(64, scaling, 1.0);
  std::vector<double> e(64, 0.0);
  e[16] = 1.0;
  const Tensor v = tensor(e, {1, 64}, DType::Float64);
  return item(sum(rope.forward(v, tensor_i64({1024})) * rope.forward(v, tensor_i64({0}), true)));
}

const Add ch11_xpos_decay(
    "ch11-xpos-decay", "the xPos score of pair 8 at distance 1024 over the plain RoPE score (RotaryEmbedding, head_dim 64, float64)",
    [](Steps& s) {
      s.add("RoPE score", pair8_score(nn::RopeScaling::None));
      s.add("xPos score", pair8_score(nn::RopeScaling::XPos));
      s.add("zeta_8", (2.0 * 8 / 64 + 0.4) / 1.4);
      return number(pair8_score(nn::RopeScaling::XPos) / pair8_score(nn::RopeScaling::None));
    });

// ---- 12. Attention -----------------------------------------------------------------------------------------

const Add ch12_allowed_pairs(
    "ch12-allowed-pairs", "the nonzero weights of scaled_dot_product_attention, 3 queries, 8 keys, causal, causal_offset 5",
    [](Steps&) {
      nn::AttentionOptions o;
      o.causal = true;
      o.causal_offset = 5;
      Tensor w;
      nn::scaled_dot_product_attention(zeros({1, 1, 3, 4}), zeros({1, 1, 8, 4}), zeros({1, 1, 8, 4}), o, &w);
      int64_t n = 0;
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 8; ++j) n += at(w, {0, 0, i, j}) > 0;
      }
      return integer(n);
    },
    {{"no-offset", [](Steps&) { return integer(6); }}});

const Add ch12_dq(
    "ch12-dq", "backward of scaled_dot_product_attention(q, k, v) (one output), float64: q.grad[0]",
    [](Steps& s) {
      const Tensor q = tensor({1.0, 0.0}, {1, 1, 1, 2}, DType::Float64).requires_grad_();
      const Tensor k = tensor({1.0, 0.0, 0.0, 0.0}, {1, 1, 2, 2}, DType::Float64).requires_grad_();
      const Tensor v = tensor({1.0, 0.0}, {1, 1, 2, 1}, DType::Float64);
      Tensor w;
      backward(nn::scaled_dot_product_attention(q, k, v, {}, &w));  // one output: dL/dO = 1
      s.add("P", fmt::format("[{:.6f}, {:.6f}]", at(w, {0, 0, 0, 0}), at(w, {0, 0, 0, 1})));
      return number(at(q.grad(), {0, 0, 0, 0}));
    });

const Add ch12_kv_bytes(
    "ch12-kv-bytes", "layers x 2 tensors x (B, H, T, dh) x 4 bytes",
    [](Steps& s) {
      const int64_t per_layer = 2 * 1 * 12 * 1024 * 64 * static_cast<int64_t>(element_size(DType::Float32));
      s.add_int("one layer, keys and values", per_layer);
      return integer(12 * per_layer);
    });

const Add ch12_split_strides(
    "ch12-split-strides", "split_heads(zeros({3, 10, 48}), 6).strides()", [](Steps& s) {
      const Tensor h = nn::split_heads(zeros({3, 10, 48}), 6);
      s.add("shape", ints(shape_vector(h.shape())).shown);
      return ints(shape_vector(h.strides()));
    });

// ---- 13. Loss and optimisation ------------------------------------------------------------------------------

const Add ch13_uniform_loss(
    "ch13-uniform-loss", "cross_entropy(zeros({1, 10000}) float64, target 0)", [](Steps&) {
      return number(item(nn::cross_entropy(zeros({1, 10000}, DType::Float64), tensor_i64({0}))));
    });

double adam_u() { return 0.01 * -0.2 / (std::sqrt(0.04) + 1e-8); }  // eta m_hat / (sqrt(v_hat) + eps), step 1

const Add ch13_adamw_step(
    "ch13-adamw-step", "nn::AdamW({.lr = 0.01, .weight_decay = 0.1}) on theta = 1 (float64) with gradient -0.2: theta after one step",
    [](Steps& s) {
      const Tensor p = tensor({1.0}, DType::Float64).requires_grad_();
      p.set_grad(tensor({-0.2}, DType::Float64));
      nn::AdamW opt({p}, {.lr = 0.01, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.1});
      opt.step();
      s.add("the decay factor 1 - lr weight_decay", 1 - 0.01 * 0.1);
      return Value{fmt::format("{:.17g}", item(p)), fmt::format("{:.10f}", item(p))};
    },
    {{"handout-order", [](Steps&) { return number((1.0 - adam_u()) * (1 - 0.01 * 0.1)); }},
     {"no-decay", [](Steps&) { return number(1.0 - adam_u()); }}});

const Add ch13_cosine(
    "ch13-cosine", "nn::cosine_lr(30, 3e-3, 3e-4, 10, 110)", [](Steps&) { return number(nn::cosine_lr(30, 3e-3, 3e-4, 10, 110)); },
    {{"no-shift", [](Steps&) {
        return number(3e-4 + 0.5 * (1 + std::cos(std::numbers::pi * 30 / 110)) * (3e-3 - 3e-4));
      }}});

const Add ch13_clip(
    "ch13-clip", "nn::clip_grad_norm_ on gradients (3, 4) and (12), max norm 5: the second parameter's gradient after",
    [](Steps& s) {
      const Tensor a = zeros({2}, DType::Float64).requires_grad_();
      const Tensor b = zeros({1}, DType::Float64).requires_grad_();
      a.set_grad(tensor({3.0, 4.0}, DType::Float64));
      b.set_grad(tensor({12.0}, DType::Float64));
      s.add("the norm returned", nn::clip_grad_norm_({a, b}, 5.0));
      return number(at(b.grad(), {0}));
    },
    {{"per-tensor", [](Steps&) { return number(5.0); }}});

const Add ch13_batch_offsets(
    "ch13-batch-offsets", "nn::get_batch(arange(1000), 20000, 64, gen): distinct first ids of the 20,000 rows",
    [](Steps& s) {
      Generator gen(0);
      const auto [x, y] = nn::get_batch(arange(int64_t{1000}), 20000, 64, gen);
      std::set<int64_t> starts;
      for (int64_t b = 0; b < 20000; ++b) starts.insert(static_cast<int64_t>(at(x, {b, 0})));
      s.add_int("smallest start", *starts.begin());
      s.add_int("largest start", *starts.rbegin());
      return integer(static_cast<int64_t>(starts.size()));
    },
    {{"one-more", [](Steps&) { return integer(937); }}});

// ---- 14. Checkpoints ------------------------------------------------------------------------------------------

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / fmt::format("course-answer-{}-{}", ::getpid(), name)).string();
}

int64_t file_size(const std::string& path) { return static_cast<int64_t>(std::filesystem::file_size(path)); }

const Add ch14_data_bytes(
    "ch14-data-bytes", "save_safetensors of w float32 [3, 5], b float64 [7], ids int64 [2]: file size - 8 - header length",
    [](Steps& s) {
      const std::string path = temp_path("data.safetensors");
      nn::save_safetensors(path, {{"w", zeros({3, 5})}, {"b", zeros({7}, DType::Float64)}, {"ids", tensor_i64({1, 2})}});
      uint64_t header = 0;
      std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&header), 8);
      const int64_t size = file_size(path);
      std::filesystem::remove(path);
      s.add_int("file size", size);
      s.add_int("header length", static_cast<int64_t>(header));
      return integer(size - 8 - static_cast<int64_t>(header));
    },
    {{"file", [](Steps&) {
        const std::string path = temp_path("data.safetensors");
        nn::save_safetensors(path, {{"w", zeros({3, 5})}, {"b", zeros({7}, DType::Float64)}, {"ids", tensor_i64({1, 2})}});
        const int64_t size = file_size(path);
        std::filesystem::remove(path);
        return integer(size);
      }}});

nn::TransformerConfig small_lm() {
  nn::TransformerConfig c;
  c.vocab_size = 16;
  c.context_length = 8;
  c.d_model = 16;
  c.num_layers = 2;
  c.num_heads = 2;
  return c;
}

const Add ch14_checkpoint_tensors(
    "ch14-checkpoint-tensors", "save_checkpoint of a 2-layer TransformerLM after one AdamW step: the tensors in the file",
    [](Steps& s) {
      nn::TransformerLM model(small_lm());
      for (const Tensor& p : model.parameters()) p.set_grad(zeros_like(p));
      nn::AdamW opt(model.parameters(), {.lr = 1e-3});
      opt.step();
      const std::string path = temp_path("ckpt.safetensors");
      nn::save_checkpoint(path, model, opt.state_dict(), 1);
      const int64_t n = static_cast<int64_t>(nn::load_safetensors(path).tensors.size());
      std::filesystem::remove(path);
      s.add_int("model tensors", static_cast<int64_t>(model.state_dict().size()));
      s.add_int("optimizer tensors", static_cast<int64_t>(opt.state_dict().size()));
      return integer(n);
    },
    {{"model-only", [](Steps&) {
        nn::TransformerLM model(small_lm());
        return integer(static_cast<int64_t>(model.state_dict().size()));
      }}});

int64_t npy_size() {
  const std::string path = temp_path("ids.npy");
  nn::save_token_ids(path, std::vector<int32_t>(1'000'000, 7));
  const int64_t size = file_size(path);
  std::filesystem::remove(path);
  return size;
}

const Add ch14_npy_size(
    "ch14-npy-size", "nn::save_token_ids of 1,000,000 ids below 65,536: the file's size", [](Steps&) { return integer(npy_size()); },
    {{"int64", [](Steps&) { return integer(npy_size() - 2'000'000 + 8'000'000); }}});

const Add ch14_int64_double(
    "ch14-int64-double", "n = 2^k + 1 for k = 1, 2, ...: the first with int64(double(n)) != n, then the 1000 integers below it all survive",
    [](Steps& s) {
      auto survives = [](int64_t n) { return static_cast<int64_t>(static_cast<double>(n)) == n; };
      int64_t n = 3;
      while (survives(n)) n = 2 * (n - 1) + 1;
      for (int64_t m = n - 1000; m < n; ++m) {
        if (!survives(m)) throw Error("ch14-int64-double: a smaller integer does not survive");
      }
      s.add("int64(double(n))", fmt::format("{}", static_cast<int64_t>(static_cast<double>(n))));
      return integer(n);
    });

// ---- 15. W2 attention ---------------------------------------------------------------------------------------------

const Add ch15_extra_params(
    "ch15-extra-params", "W2Attention(256, 8).num_parameters() - MultiHeadAttention(256, 8).num_parameters() (scalar sigma)",
    [](Steps&) {
      return integer(nn::W2Attention(256, 8).num_parameters() - nn::MultiHeadAttention(256, 8).num_parameters());
    },
    {{"no-temperature", [](Steps&) {
        return integer(nn::W2Attention(256, 8).num_parameters() - nn::MultiHeadAttention(256, 8).num_parameters() - 8);
      }}});

const Add ch15_temperature_init(
    "ch15-temperature-init", "W2Attention(512, 8) in float64: its parameter temperature[0]", [](Steps& s) {
      nn::W2Attention attn(512, 8, nullptr, nn::SigmaMode::Scalar, nullptr, DType::Float64);
      s.add("tau = softplus(temperature)", at(attn.temperatures(), {0}));
      return number(at(attn.temperature, {0}));
    },
    {{"tau", [](Steps&) { return number(8.0); }}});

const Add ch15_naive_bytes(
    "ch15-naive-bytes", "B H T T dh x 4 bytes for unsqueeze(mu_q, 3) - unsqueeze(mu_k, 2)", [](Steps& s) {
      const int64_t scores = 1LL * 8 * 1024 * 1024 * 4;
      s.add_int("the (B, H, T, T) score matrix", scores);
      return integer(scores * 64);
    });

// ---- 16. Triple-product attention -------------------------------------------------------------------------------

const Add ch16_gram(
    "ch16-gram", "-nn::gram_score(q, k, r), q = (1, 0, 0), k = (1, 1, 3), r = (0, 2, 0)",
    [](Steps&) { return number(-nn::gram_score({1, 0, 0}, {1, 1, 3}, {0, 2, 0})); },
    {{"height-only", [](Steps&) { return number(9.0); }}});

const Add ch16_backward_factor(
    "ch16-backward-factor", "backward_factor(BackwardRule::Recompute), nn/accounting.h", [](Steps& s) {
      s.add("an ordinary attention product", nn::backward_factor(nn::BackwardRule::TwoOperands));
      return integer(static_cast<int64_t>(nn::backward_factor(nn::BackwardRule::Recompute)));
    });

const Add ch16_loud_key(
    "ch16-loud-key", "nn::gram_score(q, k, r), q = (1, 0, 0), r = (0, 1, 0), k = (3, 2, 7)",
    [](Steps&) { return number(nn::gram_score({1, 0, 0}, {3, 2, 7}, {0, 1, 0})); },
    {{"whole-norm", [](Steps&) { return number(-(9.0 + 4.0 + 49.0)); }}});

// ---- 17. The language model ------------------------------------------------------------------------------------

const Add ch17_params_medium(
    "ch17-params-medium", "nn::account(nn::gpt2_config(\"medium\"), 1, 1024).parameters()", [](Steps& s) {
      const nn::Accounting a = nn::account(nn::gpt2_config("medium"), 1, 1024);
      for (const auto& row : a.rows) {
        if (row.name == "token_embeddings" || row.name == "ffn.w1" || row.name == "lm_head") {
          s.add_int(row.name + (row.copies > 1 ? " (all layers)" : ""), row.parameters);
        }
      }
      return integer(a.parameters());
    },
    {{"tied", [](Steps&) {
        const nn::TransformerConfig c = nn::gpt2_config("medium");
        return integer(nn::account(c, 1, 1024).parameters() - c.vocab_size * c.d_model);
      }}});

const Add ch17_flops_small(
    "ch17-flops-small", "nn::account(nn::gpt2_config(\"small\"), 4, 512).forward_flops()", [](Steps& s) {
      const nn::Accounting a = nn::account(nn::gpt2_config("small"), 4, 512);
      s.add("feed-forward", a.group_forward_flops("feed-forward"));
      s.add("attention projections", a.group_forward_flops("attention projections"));
      s.add("attention scores", a.group_forward_flops("attention scores"));
      s.add("attention values", a.group_forward_flops("attention values"));
      s.add("lm_head", a.group_forward_flops("lm_head"));
      return number(a.forward_flops());
    });

const Add ch17_largest_batch(
    "ch17-largest-batch", "the largest B with nn::account(nn::gpt2_config(\"large\"), B, 1024).memory_bytes() <= 80e9",
    [](Steps& s) {
      const nn::TransformerConfig c = nn::gpt2_config("large");
      int64_t b = 0;
      while (nn::account(c, b + 1, 1024).memory_bytes() <= 80e9) ++b;
      s.add("bytes at B", nn::account(c, b, 1024).memory_bytes());
      s.add("bytes at B + 1", nn::account(c, b + 1, 1024).memory_bytes());
      return integer(b);
    });

int64_t top_p_kept(double p) {
  Generator gen(0);
  const Tensor logits = tensor({3.0, 2.0, 1.0, 0.0});
  std::set<int64_t> drawn;
  for (int i = 0; i < 20000; ++i) drawn.insert(nn::sample_token(logits, 1.0, p, gen));
  return static_cast<int64_t>(drawn.size());
}

const Add ch17_top_p_kept(
    "ch17-top-p-kept", "nn::sample_token(logits (3, 2, 1, 0), temperature 1, top_p 0.8), 20,000 draws: the distinct ids drawn",
    [](Steps& s) {
      s.add_int("top_p 1.0 instead", top_p_kept(1.0));
      return integer(top_p_kept(0.8));
    },
    {{"exclusive", [](Steps&) { return integer(1); }}});

// ---- 18. Training ---------------------------------------------------------------------------------------------

const Add ch18_initial_loss(
    "ch18-initial-loss", "cross_entropy of uniform logits over 32 classes (float64)", [](Steps&) {
      return number(item(nn::cross_entropy(zeros({1, 32}, DType::Float64), tensor_i64({0}))));
    });

const Add ch18_copy_floor(
    "ch18-copy-floor", "(L/2 - 1) / (L - 1) ln V for L = 48, V = 32", [](Steps& s) {
      s.add("ln V", std::log(32.0));
      return number((48.0 / 2 - 1) / (48 - 1) * std::log(32.0));
    });

const Add ch18_lr_at_step(
    "ch18-lr-at-step", "nn::cosine_lr(75, 1e-2, 1e-3, 25, 200), the schedule train_step sets", [](Steps&) {
      return number(nn::cosine_lr(75, 1e-2, 1e-3, 25, 200));
    },
    {{"zero-based", [](Steps&) { return number(nn::cosine_lr(74, 1e-2, 1e-3, 25, 200)); }}});

nn::TransformerConfig copy_model() {
  nn::TransformerConfig c;
  c.vocab_size = 64;
  c.context_length = 31;
  c.d_model = 96;
  c.num_layers = 3;
  c.num_heads = 6;
  return c;
}

const Add ch18_params_copy(
    "ch18-params-copy", "nn::account(config, 1, 31).parameters(): vocab 64, context 31, d_model 96, 3 layers, 6 heads", [](Steps& s) {
      s.add_int("d_ff", nn::feed_forward_width(nn::FeedForwardKind::SwiGLU, 96));
      return integer(nn::account(copy_model(), 1, 31).parameters());
    },
    {{"d-ff-4d", [](Steps&) {
        nn::TransformerConfig c = copy_model();
        c.d_ff = 4 * 96;
        return integer(nn::account(c, 1, 31).parameters());
      }}});

// ---- 19. Tokenizer ------------------------------------------------------------------------------------------------

const Add ch19_utf8_bytes(
    "ch19-utf8-bytes", "the length of the UTF-8 string \"na\\u00efve \\u6771\\u4eac \\U0001F642\"", [](Steps&) {
      const std::string text = "na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac \xf0\x9f\x99\x82";
      return integer(static_cast<int64_t>(text.size()));
    });

const Add ch19_pretokens(
    "ch19-pretokens", "tok::for_each_pretoken over the text (below, a space shown as a middle dot)", [](Steps& s) {
      std::string listed;
      int64_t n = 0;
      tok::for_each_pretoken("It's   3 o'clock!\n\nDone.", [&](std::string_view p) {
        std::string shown;
        for (char ch : p) shown += ch == '\n' ? std::string("\\n") : ch == ' ' ? std::string("\u00b7") : std::string(1, ch);
        listed += (n++ ? " " : "") + std::string("\"") + shown + "\"";
      });
      s.add("pre-tokens", listed);
      return integer(n);
    });

const Add ch19_third_merge(
    "ch19-third-merge", "tok::train_bpe(corpus, 259, {}) on the statement's corpus: the token of merge 3",
    [](Steps& s) {
      const tok::BpeModel m = tok::train_bpe("low\nlower\nlowest\nnewer\nnewest\nwider\n", 259, {});
      for (size_t r = 0; r < m.merges.size(); ++r) {
        s.add(fmt::format("merge {}", r + 1),
              fmt::format("\"{}\" + \"{}\"", m.vocab[m.merges[r].first], m.vocab[m.merges[r].second]));
      }
      return text(m.vocab[256 + 2]);
    });

const Add ch19_merge_count(
    "ch19-merge-count", "tok::train_bpe(\"aaaaaaa\", 1000, {}).merges.size()", [](Steps& s) {
      const tok::BpeModel m = tok::train_bpe("aaaaaaa", 1000, {});
      for (size_t r = 0; r < m.merges.size(); ++r) {
        s.add(fmt::format("merge {}", r + 1),
              fmt::format("\"{}\" + \"{}\"", m.vocab[m.merges[r].first], m.vocab[m.merges[r].second]));
      }
      return integer(static_cast<int64_t>(m.merges.size()));
    });

// ---- 20. Experiments ------------------------------------------------------------------------------------------------

const Add ch20_edge_step(
    "ch20-edge-step", "the first t with nn::cosine_lr(t, 3, 3e-4, 20, 400) > 1", [](Steps& s) {
      int64_t t = 0;
      while (nn::cosine_lr(t, 3, 3e-4, 20, 400) <= 1) ++t;
      s.add("its learning rate", nn::cosine_lr(t, 3, 3e-4, 20, 400));
      return integer(t);
    });

const Add ch20_silu_gap(
    "ch20-silu-gap", "2 x (nn::feed_forward_parameters(SwiGLU, 128) - feed_forward_parameters(SiLU, 128))", [](Steps&) {
      return integer(2 * (nn::feed_forward_parameters(nn::FeedForwardKind::SwiGLU, 128) -
                          nn::feed_forward_parameters(nn::FeedForwardKind::SiLU, 128)));
    });

const Add ch20_uniform_loss(
    "ch20-uniform-loss", "cross_entropy of uniform logits over 2000 classes (float64)", [](Steps&) {
      return number(item(nn::cross_entropy(zeros({1, 2000}, DType::Float64), tensor_i64({0}))));
    });

// ---- 21. Data-parallel training -------------------------------------------------------------------------------------

const Add ch21_ring_bytes(
    "ch21-ring-bytes", "tasks::ring_bytes(8 x 190,460,160, 16)", [](Steps&) {
      return number(tasks::ring_bytes(8.0 * 190460160, 16));
    });

const Add ch21_zero_bytes(
    "ch21-zero-bytes", "4P + 4P + 8P/N for P = 1.5e9, N = 64", [](Steps&) {
      const double p = 1.5e9;
      return number(4 * p + 4 * p + 8 * p / 64);
    },
    {{"unsharded", [](Steps&) { return number(16 * 1.5e9); }}});

const Add ch21_ring_time(
    "ch21-ring-time", "tasks::ring_allreduce_seconds(761,840,640, 64, NetworkModel{}) (5 us, 100 Gb/s)", [](Steps& s) {
      const tasks::NetworkModel net;
      s.add("latency term 2 (N - 1) alpha", 2 * 63 * net.latency_s);
      return number(tasks::ring_allreduce_seconds(761840640.0, 64, net));
    },
    {{"gigabytes", [](Steps&) {
        tasks::NetworkModel net;
        net.bandwidth_bytes_per_s = 100e9;
        return number(tasks::ring_allreduce_seconds(761840640.0, 64, net));
      }}});

// Prints "  TEXT" wrapped at spaces, continuation lines indented by 4: the book shows this output,
// and a phone shows about 46 columns of a code block in a note.
void print_wrapped(const std::string& text) {
  std::string line = " ";
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (line.size() + 1 + w.size() > 44 && line.size() > 4) {
      std::cout << line << "\n";
      line = "   ";
    }
    line += ' ' + w;
  }
  std::cout << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  set_num_threads(1);  // one thread: a GemmTrace sees whole products, and every run prints the same digits
  std::optional<course::AnswerOptions> options;
  try {
    options = course::read_answer_options(std::vector<std::string>(argv + 1, argv + argc));  // course/tool_options.h
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";  // names course-answer already
    return 2;
  }
  if (!options) return 0;  // --help
  using Action = course::AnswerOptions::Action;
  if (options->action == Action::List) {
    for (const auto& p : registry()) std::cout << p.id << "\n";
    return 0;
  }
  const std::string& id = options->id;
  const auto it = std::find_if(registry().begin(), registry().end(), [&](const Problem& p) { return p.id == id; });
  if (it == registry().end()) {
    std::cerr << "course-answer: no computed problem '" << id << "' (course-answer --list)\n";
    return 2;
  }
  const Problem* p = &*it;
  Fn fn = p->value;
  if (!options->variant.empty()) {
    const auto v = p->variants.find(options->variant);
    if (v == p->variants.end()) {
      std::cerr << "course-answer: " << id << " has no variant '" << options->variant << "'\n";
      return 2;
    }
    fn = v->second;
  }
  const bool explain = options->action == Action::Explain;
  try {
    Steps steps;
    const Value v = fn(steps);
    if (explain) {
      std::cout << p->id << " = " << v.shown << "\n";
      print_wrapped("computed by: " + p->how);
      for (const auto& line : steps.lines) print_wrapped(line);
    } else {
      std::cout << v.text << "\n";
    }
  } catch (const NotImplemented& e) {
    std::cerr << "blocked by " << e.id() << ": " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "course-answer: " << id << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
