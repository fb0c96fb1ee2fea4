// Forward values and gradients against PyTorch, from a committed fixture file.
//
// tests/fixtures/make_fixtures.py (run once with torch 1.13) wrote
// tests/fixtures/ops.txt; this test needs no Python. For every case and both
// float dtypes it rebuilds the op with ropegrad, compares each output, then
// backpropagates loss = sum_k sum(out_k * w_k) (w_k: fixed random weights from
// the file, so gradients are not all ones) and compares d loss / d input.
//
// Fixture format (see make_fixtures.py), one record per line:
//   ropegrad-fixtures 1                                     header
//   # ...                                                   comments
//   <case>/<f64|f32>/<tensor> <dtype> <ndim> <dims...> <values...>
//   end <number of records>                                 trailer
// <tensor>: an input name, out<k>, w<k> (weight of out<k>) or grad.<input>.
// <dtype>: float64 | float32 | int64 | bool. Floats are C hex floats
// (float.hex(), exact), int64 decimal, bool 0/1; values are row-major.
//
// Tolerances: float64 |actual - expected| <= 1e-12 + 1e-10 |expected|; float32
// the error bound of tests/support/test_util.h (checked at the end); cases that only
// move, select or scale by exact factors (views, gather, relu, ...) must match
// bit for bit; int64 and bool outputs always match exactly.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tests/support/test_util.h"

using namespace ropegrad;

namespace {

// ---- the fixture file ---------------------------------------------------------------

struct Record {
  DType dtype;
  Shape shape;
  std::vector<double> floats;  // float64 / float32 values (exact in double)
  std::vector<int64_t> ints;   // int64 / bool values
};

struct Fixture {
  std::map<std::string, Record> records;
};

// Parses the whole file; returns "" on success or a message naming the line.
std::string parse_fixture(std::istream& in, Fixture& out) {
  std::string line;
  if (!std::getline(in, line) || line != "ropegrad-fixtures 1")
    return "line 1: expected the header 'ropegrad-fixtures 1'";
  int64_t line_no = 1;
  bool ended = false;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (ended) return where + "text after the 'end' trailer";
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, dtype_str;
    fields >> name;
    if (name == "end") {
      int64_t count = -1;
      if (!(fields >> count) || count != static_cast<int64_t>(out.records.size()))
        return where + "trailer says " + std::to_string(count) + " records, file has " +
               std::to_string(out.records.size());
      ended = true;
      continue;
    }
    Record r;
    int64_t ndim = -1;
    if (!(fields >> dtype_str >> ndim) || ndim < 0 || ndim > 8)
      return where + "expected '<name> <dtype> <ndim>' for '" + name + "'";
    if (dtype_str == "float64") r.dtype = DType::Float64;
    else if (dtype_str == "float32") r.dtype = DType::Float32;
    else if (dtype_str == "int64") r.dtype = DType::Int64;
    else if (dtype_str == "bool") r.dtype = DType::Bool;
    else return where + "unknown dtype '" + dtype_str + "' for '" + name + "'";
    for (int64_t d = 0; d < ndim; ++d) {
      int64_t size = -1;
      if (!(fields >> size) || size < 0 || size > 1'000'000)
        return where + "bad size of dim " + std::to_string(d) + " for '" + name + "'";
      r.shape.push_back(size);
    }
    const int64_t numel = numel_of(r.shape);
    std::string token;
    int64_t count = 0;
    while (fields >> token) {
      if (count == numel)
        return where + "more than " + std::to_string(numel) + " values for '" + name + "'";
      char* end = nullptr;
      errno = 0;
      if (is_floating(r.dtype)) {
        const double v = std::strtod(token.c_str(), &end);
        if (*end != '\0' || token.empty())
          return where + "bad number '" + token + "' in '" + name + "'";
        r.floats.push_back(v);
      } else {
        const long long v = std::strtoll(token.c_str(), &end, 10);
        if (*end != '\0' || token.empty() || errno == ERANGE ||
            (r.dtype == DType::Bool && v != 0 && v != 1))
          return where + "bad " + dtype_str + " '" + token + "' in '" + name + "'";
        r.ints.push_back(v);
      }
      ++count;
    }
    if (count != numel)
      return where + "'" + name + "' has shape " + shape_str(r.shape) + " (" +
             std::to_string(numel) + " values) but " + std::to_string(count) + " values";
    if (!out.records.emplace(name, std::move(r)).second)
      return where + "duplicate record '" + name + "'";
  }
  if (!ended) return "file ends without the 'end <count>' trailer (truncated?)";
  return "";
}

// Loads ROPEGRAD_FIXTURES/ops.txt once; every parity test asserts `error` is empty.
struct Loaded {
  Fixture fixture;
  std::string error;
};

const Loaded& fixtures() {
  static const Loaded loaded = [] {
    Loaded l;
    const std::string path = std::string(ROPEGRAD_FIXTURES) + "/ops.txt";
    std::ifstream file(path);
    if (!file) {
      l.error = "cannot open fixture file " + path +
                " (regenerate it: /usr/bin/python3 tests/fixtures/make_fixtures.py)";
      return l;
    }
    const std::string err = parse_fixture(file, l.fixture);
    if (!err.empty()) l.error = "corrupt fixture file " + path + ": " + err;
    return l;
  }();
  return loaded;
}

Tensor to_tensor(const Record& r) {
  // Built 1-D then reshaped so 0-d records come out 0-d.
  const Shape flat{numel_of(r.shape)};
  Tensor t;
  if (is_floating(r.dtype)) {
    t = tensor(r.floats, flat, r.dtype);
  } else if (r.dtype == DType::Int64) {
    t = tensor_i64(r.ints, flat);
  } else {
    t = tensor_bool(std::vector<bool>(r.ints.begin(), r.ints.end()), flat);
  }
  return reshape(t, r.shape);
}

// ---- check_tensor, in the spirit of llm.c's test_gpt2.c --------------------------------

struct Tolerance {
  double rtol, atol;
};

// Compares shape, dtype and every element; prints one OK / NOT OK line with the
// largest difference, and records a gtest failure naming the worst element.
bool check_tensor(const Tensor& expected, const Tensor& actual, const std::string& label,
                  Tolerance tol) {
  if (!actual.defined()) {
    ADD_FAILURE() << label << ": no tensor (expected shape " << shape_str(expected.shape()) << ")";
    return false;
  }
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) {
    std::printf("%-48s NOT OK (shape/dtype)\n", label.c_str());
    ADD_FAILURE() << label << ": expected " << dtype_name(expected.dtype()) << " "
                  << shape_str(expected.shape()) << ", got " << dtype_name(actual.dtype()) << " "
                  << shape_str(actual.shape());
    return false;
  }
  const std::vector<double> e = expected.to_vector<double>();
  const std::vector<double> a = actual.to_vector<double>();
  double max_diff = 0;
  int64_t bad = 0, worst = -1;
  double worst_excess = -1;
  for (size_t i = 0; i < e.size(); ++i) {
    bool ok;
    double diff;
    if (std::isnan(e[i]) || std::isnan(a[i]) || std::isinf(e[i]) || std::isinf(a[i])) {
      ok = (std::isnan(e[i]) && std::isnan(a[i])) || e[i] == a[i];
      diff = ok ? 0 : INFINITY;
    } else {
      diff = std::fabs(a[i] - e[i]);
      ok = diff <= tol.atol + tol.rtol * std::fabs(e[i]);
    }
    max_diff = std::max(max_diff, diff);
    if (!ok) {
      ++bad;
      const double excess = diff - (tol.atol + tol.rtol * std::fabs(e[i]));
      if (excess > worst_excess) worst_excess = excess, worst = static_cast<int64_t>(i);
    }
  }
  std::printf("%-48s %s (max |diff| %.3g)\n", label.c_str(), bad == 0 ? "OK    " : "NOT OK",
              max_diff);
  if (bad > 0) {
    ADD_FAILURE() << label << " (" << dtype_name(expected.dtype()) << " "
                  << shape_str(expected.shape()) << "): " << bad << " of " << e.size()
                  << " elements differ; worst at flat index " << worst << ": expected "
                  << fmt::format("{:.17g}", e[worst]) << ", got "
                  << fmt::format("{:.17g}", a[worst])
                  << " (rtol " << tol.rtol << ", atol " << tol.atol << ")";
  }
  return bad == 0;
}

// ---- the cases: ropegrad's version of each torch expression in make_fixtures.py --------

using Inputs = std::map<std::string, Tensor>;
using In = const Inputs&;
using Outs = std::vector<Tensor>;
using CaseFn = std::function<Outs(In)>;

struct ParityCase {
  std::string name;
  bool exact;  // pure data movement / selection: outputs and gradients bit-equal to torch
  CaseFn fn;
};

constexpr bool kExact = true, kRounded = false;

std::vector<Tensor> mm(const Inputs& t) { return {matmul(t.at("a"), t.at("b"))}; }

// -mean(gather(log_softmax(logits), targets)): cross-entropy as a student writes it.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  return neg(mean(gather(log_softmax(logits, -1), 1, unsqueeze(targets, 1))));
}

const std::vector<ParityCase>& parity_cases() {
  static const std::vector<ParityCase> cases = {
      // ---- elementwise with broadcasting
      {"add_bcast_row", kRounded, [](In t) -> Outs { return {t.at("a") + t.at("b")}; }},
      {"add_bcast_both", kRounded, [](In t) -> Outs { return {t.at("a") + t.at("b")}; }},
      {"sub_bcast", kRounded, [](In t) -> Outs { return {t.at("a") - t.at("b")}; }},
      {"mul_bcast", kRounded, [](In t) -> Outs { return {t.at("a") * t.at("b")}; }},
      {"mul_same", kRounded, [](In t) -> Outs { return {mul(t.at("a"), t.at("b"))}; }},
      {"div_bcast_row", kRounded, [](In t) -> Outs { return {t.at("a") / t.at("b")}; }},
      {"div_bcast_col", kRounded, [](In t) -> Outs { return {div(t.at("a"), t.at("b"))}; }},
      {"scalar_arith", kRounded, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {x + 2.5, x * -1.5, x - 0.75, x / 4, 2 - x, 3 / x, -x};
       }},
      // ---- pow
      {"pow_scalar_int", kRounded, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {pow(x, 2), pow(x, 3), pow(x, 0), pow(x, 1)};
       }},
      {"pow_scalar_neg", kRounded, [](In t) -> Outs {
         return {pow(t.at("x"), -2), pow(t.at("x"), -1)};
       }},
      {"pow_scalar_frac", kRounded, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {pow(x, 0.5), pow(x, -1.5), pow(x, 2.7)};
       }},
      {"pow_tensor", kRounded, [](In t) -> Outs { return {pow(t.at("a"), t.at("b"))}; }},
      // ---- unary
      {"exp", kRounded, [](In t) -> Outs { return {exp(t.at("x"))}; }},
      {"log", kRounded, [](In t) -> Outs { return {log(t.at("x"))}; }},
      {"sqrt", kRounded, [](In t) -> Outs { return {sqrt(t.at("x"))}; }},
      {"rsqrt", kRounded, [](In t) -> Outs { return {rsqrt(t.at("x"))}; }},
      {"abs", kExact, [](In t) -> Outs { return {abs(t.at("x"))}; }},
      {"sin", kRounded, [](In t) -> Outs { return {sin(t.at("x"))}; }},
      {"cos", kRounded, [](In t) -> Outs { return {cos(t.at("x"))}; }},
      {"tanh", kRounded, [](In t) -> Outs { return {tanh(t.at("x"))}; }},
      {"sigmoid", kRounded, [](In t) -> Outs { return {sigmoid(t.at("x"))}; }},
      {"relu", kExact, [](In t) -> Outs { return {relu(t.at("x"))}; }},
      {"silu", kRounded, [](In t) -> Outs { return {silu(t.at("x"))}; }},
      {"softplus", kRounded, [](In t) -> Outs { return {softplus(t.at("x"))}; }},
      {"clamp_both", kExact, [](In t) -> Outs { return {clamp(t.at("x"), -1.0, 1.0)}; }},
      {"clamp_min", kExact, [](In t) -> Outs { return {clamp(t.at("x"), -0.5, std::nullopt)}; }},
      {"clamp_max", kExact, [](In t) -> Outs { return {clamp(t.at("x"), std::nullopt, 0.75)}; }},
      {"maximum", kExact, [](In t) -> Outs { return {maximum(t.at("a"), t.at("b"))}; }},
      {"minimum", kExact, [](In t) -> Outs { return {minimum(t.at("a"), t.at("b"))}; }},
      {"where", kExact, [](In t) -> Outs {
         return {where(t.at("cond"), t.at("a"), t.at("b"))};
       }},
      {"where_bcast_cond", kExact, [](In t) -> Outs {
         return {where(t.at("cond"), t.at("a"), t.at("b"))};
       }},
      {"masked_fill", kExact, [](In t) -> Outs {
         return {masked_fill(t.at("x"), t.at("mask"), -7.5)};
       }},
      {"masked_fill_col", kExact, [](In t) -> Outs {
         return {masked_fill(t.at("x"), t.at("mask"), 0.0)};
       }},
      {"causal_softmax", kRounded, [](In t) -> Outs {
         return {softmax(masked_fill(t.at("x"), t.at("mask"), -INFINITY), -1)};
       }},
      {"tril", kExact, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {tril(x), tril(x, 1), tril(x, -1)};
       }},
      {"triu", kExact, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {triu(x), triu(x, 1), triu(x, -2)};
       }},
      {"tril_triu_batched", kExact, [](In t) -> Outs {
         return {tril(t.at("x")), triu(t.at("x"), 2)};
       }},
      // ---- reductions
      {"sum_all", kRounded, [](In t) -> Outs { return {sum(t.at("x"))}; }},
      {"sum_dim0", kRounded, [](In t) -> Outs { return {sum(t.at("x"), {0})}; }},
      {"sum_dim1_keepdim", kRounded, [](In t) -> Outs { return {sum(t.at("x"), {1}, true)}; }},
      {"sum_dims02", kRounded, [](In t) -> Outs { return {sum(t.at("x"), {0, 2})}; }},
      {"sum_dim_neg", kRounded, [](In t) -> Outs { return {sum(t.at("x"), {-1})}; }},
      {"mean_all", kRounded, [](In t) -> Outs { return {mean(t.at("x"))}; }},
      {"mean_dim0", kRounded, [](In t) -> Outs { return {mean(t.at("x"), {0})}; }},
      {"mean_dims12_keepdim", kRounded, [](In t) -> Outs {
         return {mean(t.at("x"), {1, 2}, true)};
       }},
      {"mean_dim_neg", kRounded, [](In t) -> Outs { return {mean(t.at("x"), {-2})}; }},
      {"amax_dim1", kExact, [](In t) -> Outs { return {amax(t.at("x"), {1})}; }},
      {"amax_dims02_keepdim", kExact, [](In t) -> Outs { return {amax(t.at("x"), {0, 2}, true)}; }},
      {"amax_all", kExact, [](In t) -> Outs { return {amax(t.at("x"))}; }},
      {"amax_ties", kRounded, [](In t) -> Outs {
         return {amax(t.at("x"), {1}), amax(t.at("x"), {0})};
       }},
      {"max_dim1", kExact, [](In t) -> Outs {
         auto [values, indices] = max(t.at("x"), 1);
         return {values, indices};
       }},
      {"max_dim0_keepdim", kExact, [](In t) -> Outs {
         auto [values, indices] = max(t.at("x"), 0, true);
         return {values, indices};
       }},
      {"max_dim_ties", kExact, [](In t) -> Outs {
         auto [values, indices] = max(t.at("x"), 1);
         return {values, indices};
       }},
      {"logsumexp_dim1", kRounded, [](In t) -> Outs { return {logsumexp(t.at("x"), {1})}; }},
      {"logsumexp_dims02_keepdim", kRounded, [](In t) -> Outs {
         return {logsumexp(t.at("x"), {0, 2}, true)};
       }},
      {"logsumexp_large", kRounded, [](In t) -> Outs { return {logsumexp(t.at("x"), {1})}; }},
      {"logsumexp_large_neg", kRounded, [](In t) -> Outs { return {logsumexp(t.at("x"), {0})}; }},
      {"softmax_last", kRounded, [](In t) -> Outs { return {softmax(t.at("x"), -1)}; }},
      {"softmax_dim0", kRounded, [](In t) -> Outs { return {softmax(t.at("x"), 0)}; }},
      {"softmax_mid", kRounded, [](In t) -> Outs { return {softmax(t.at("x"), 1)}; }},
      {"softmax_large", kRounded, [](In t) -> Outs { return {softmax(t.at("x"), 1)}; }},
      {"softmax_large_close", kRounded, [](In t) -> Outs { return {softmax(t.at("x"), -1)}; }},
      {"log_softmax_last", kRounded, [](In t) -> Outs { return {log_softmax(t.at("x"), -1)}; }},
      {"log_softmax_dim0", kRounded, [](In t) -> Outs { return {log_softmax(t.at("x"), 0)}; }},
      {"log_softmax_mid", kRounded, [](In t) -> Outs { return {log_softmax(t.at("x"), 1)}; }},
      {"log_softmax_large", kRounded, [](In t) -> Outs { return {log_softmax(t.at("x"), 1)}; }},
      {"log_softmax_large_close", kRounded, [](In t) -> Outs {
         return {log_softmax(t.at("x"), -1)};
       }},
      // ---- matmul, every torch.matmul shape rule
      {"matmul_1d_1d", kRounded, mm},        // [4] @ [4] -> []
      {"matmul_1d_2d", kRounded, mm},        // [4] @ [4, 3] -> [3]
      {"matmul_2d_1d", kRounded, mm},        // [3, 4] @ [4] -> [3]
      {"matmul_2d_2d", kRounded, mm},        // [3, 4] @ [4, 5] -> [3, 5]
      {"matmul_batched", kRounded, mm},      // [2, 3, 4] @ [2, 4, 5] -> [2, 3, 5]
      {"matmul_bcast_batch", kRounded, mm},  // [2, 1, 3, 4] @ [3, 4, 2] -> [2, 3, 3, 2]
      {"matmul_nd_2d", kRounded, mm},        // [2, 3, 4] @ [4, 5] -> [2, 3, 5]
      {"matmul_2d_nd", kRounded, mm},        // [3, 4] @ [2, 4, 5] -> [2, 3, 5]
      {"matmul_1d_3d", kRounded, mm},        // [4] @ [2, 4, 5] -> [2, 5]
      {"matmul_3d_1d", kRounded, mm},        // [2, 3, 4] @ [4] -> [2, 3]
      {"matmul_transposed_views", kRounded, [](In t) -> Outs {
         // a [4, 3] -> a^T [3, 4]; b [5, 4] -> b^T [4, 5]
         return {matmul(transpose(t.at("a"), 0, 1), transpose(t.at("b"), 0, 1))};
       }},
      {"matmul_batched_transposed", kRounded, [](In t) -> Outs {
         return {matmul(t.at("a"), transpose(t.at("b"), -1, -2))};  // [2,3,4] @ [2,4,5]
       }},
      // ---- indexing and joining
      {"index_select_dim0", kExact, [](In t) -> Outs {
         return {index_select(t.at("x"), 0, t.at("idx"))};
       }},
      {"index_select_dim1", kExact, [](In t) -> Outs {
         return {index_select(t.at("x"), 1, t.at("idx"))};
       }},
      {"embedding", kExact, [](In t) -> Outs {
         return {embedding(t.at("ids"), t.at("weight"))};
       }},
      {"gather_dim1", kExact, [](In t) -> Outs { return {gather(t.at("x"), 1, t.at("idx"))}; }},
      {"gather_dim0", kExact, [](In t) -> Outs { return {gather(t.at("x"), 0, t.at("idx"))}; }},
      {"cat_dim0", kExact, [](In t) -> Outs {
         return {cat({t.at("a"), t.at("b"), t.at("c")}, 0)};
       }},
      {"cat_dim1", kExact, [](In t) -> Outs { return {cat({t.at("a"), t.at("b")}, 1)}; }},
      {"cat_dim_neg_3d", kExact, [](In t) -> Outs { return {cat({t.at("a"), t.at("b")}, -1)}; }},
      {"stack_dim0", kExact, [](In t) -> Outs {
         return {stack({t.at("a"), t.at("b"), t.at("c")}, 0)};
       }},
      {"stack_dim1", kExact, [](In t) -> Outs { return {stack({t.at("a"), t.at("b")}, 1)}; }},
      {"stack_dim_neg", kExact, [](In t) -> Outs { return {stack({t.at("a"), t.at("b")}, -1)}; }},
      // ---- views followed by a reduction
      {"narrow_sum", kRounded, [](In t) -> Outs { return {sum(narrow(t.at("x"), 1, 1, 3), {0})}; }},
      {"transpose_mean", kRounded, [](In t) -> Outs {
         return {mean(transpose(t.at("x"), 0, 2), {1})};  // [4, 3, 2] -> [4, 2]
       }},
      {"permute_sum", kRounded, [](In t) -> Outs {
         return {sum(permute(t.at("x"), {2, 0, 1}), {-1})};  // [4, 2, 3] -> [4, 2]
       }},
      {"expand_sum", kRounded, [](In t) -> Outs {
         return {sum(expand(t.at("x"), {2, 3, 4}), {0})};  // [3, 1] -> [2, 3, 4] -> [3, 4]
       }},
      {"slice_step_sum", kRounded, [](In t) -> Outs {
         return {sum(slice(t.at("x"), 1, 0, 5, 2), {1})};  // x[:, 0:5:2]
       }},
      {"transpose_reshape", kExact, [](In t) -> Outs {
         return {amax(reshape(transpose(t.at("x"), 0, 1), {2, 6}), {1})};
       }},
      {"view_chain_mul", kRounded, [](In t) -> Outs {
         // x [2,3,4] -> [2,4,3] * y [4,3] -> narrow dim 1 -> [2,2,3] -> sum -> [2]
         return {sum(narrow(permute(t.at("x"), {0, 2, 1}) * t.at("y"), 1, 1, 2), {0, 2})};
       }},
      // ---- composites
      {"cross_entropy", kRounded, [](In t) -> Outs {
         return {cross_entropy(t.at("logits"), t.at("targets"))};
       }},
      {"cross_entropy_large", kRounded, [](In t) -> Outs {
         return {cross_entropy(t.at("logits"), t.at("targets"))};
       }},
      {"cross_entropy_btv", kRounded, [](In t) -> Outs {
         return {cross_entropy(reshape(t.at("logits"), {6, 5}), reshape(t.at("targets"), {6}))};
       }},
      {"rmsnorm", kRounded, [](In t) -> Outs {
         const Tensor& x = t.at("x");
         return {x * rsqrt(mean(pow(x, 2), {-1}, true) + 1e-5) * t.at("g")};
       }},
  };
  return cases;
}

bool is_role(const std::string& tensor_name, const char* prefix) {
  const size_t n = std::strlen(prefix);
  if (tensor_name.compare(0, n, prefix) != 0 || tensor_name.size() == n) return false;
  if (std::string(prefix) == "grad.") return true;
  return tensor_name.find_first_not_of("0123456789", n) == std::string::npos;
}

bool is_input_name(const std::string& n) {
  return !is_role(n, "out") && !is_role(n, "w") && !is_role(n, "grad.");
}

// ---- the parity test: one per (case, dtype) ------------------------------------------

struct ParityParam {
  int case_index;
  bool f64;
};

void PrintTo(const ParityParam& p, std::ostream* os) {
  *os << parity_cases()[p.case_index].name << (p.f64 ? "/f64" : "/f32");
}

class Parity : public ::testing::TestWithParam<ParityParam> {};

// A rounded float32 case: forward and the gradients of sum_k sum(out_k * w_k),
// each within the float32 bound. K bounds every reduction: the largest input's
// size; stages: the op forward, then at most two rounded steps in its backward.
void check_float32_case(const ParityCase& pc, const std::map<std::string, Tensor>& rec, const Inputs& inputs,
                        const std::string& prefix) {
  std::vector<std::string> float_names;
  int64_t k = 1;
  for (const auto& [name, t] : inputs) {
    if (t.is_floating_point()) float_names.push_back(name);
    k = std::max(k, t.numel());
  }
  std::vector<Tensor> leaves;  // the float inputs, then w0, w1, ...
  for (const std::string& name : float_names) leaves.push_back(inputs.at(name));
  size_t n_w = 0;
  while (rec.count(fmt::format("w{}", n_w))) leaves.push_back(rec.at(fmt::format("w{}", n_w++)));
  const ropegrad::testing::ParityRun run = [&](const std::vector<Tensor>& ls) {
    Inputs in = inputs;
    for (size_t i = 0; i < float_names.size(); ++i) {
      Tensor leaf = ls[i];
      in[float_names[i]] = leaf.requires_grad_();
    }
    const Outs outs = pc.fn(in);
    ropegrad::testing::NamedTensors r;
    Tensor loss;
    for (size_t o = 0; o < outs.size(); ++o) {
      r.emplace_back(fmt::format("out{}", o), outs[o].detach());
      if (o < n_w) {
        const Tensor term = sum(outs[o] * ls[float_names.size() + o]);
        loss = loss.defined() ? loss + term : term;
      }
    }
    if (loss.defined()) backward(loss);
    for (const std::string& name : float_names) {
      const Tensor& leaf = in.at(name);
      r.emplace_back("grad." + name, leaf.grad().defined() ? leaf.grad() : zeros_like(leaf));
    }
    return r;
  };
  ropegrad::testing::expect_f32_parity(run, leaves, [&](const std::string& name) { return rec.at(name); }, {k, 3}, prefix);
}

TEST_P(Parity, ForwardAndGradientsMatchTorch) {
  const Loaded& loaded = fixtures();
  ASSERT_TRUE(loaded.error.empty()) << loaded.error;
  const ParityCase& pc = parity_cases()[GetParam().case_index];
  const bool f64 = GetParam().f64;
  const std::string prefix = pc.name + (f64 ? "/f64/" : "/f32/");
  // Exact cases (views, indexing) match bit for bit; rounded float64 cases to
  // float64's rounding; rounded float32 cases within the float32 error bound
  // (tests/support/test_util.h), below.
  const Tolerance tol = pc.exact ? Tolerance{0, 0} : Tolerance{1e-10, 1e-12};

  // Every record of this case, by its tensor name.
  std::map<std::string, Tensor> rec;
  for (auto it = loaded.fixture.records.lower_bound(prefix);
       it != loaded.fixture.records.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    rec.emplace(it->first.substr(prefix.size()), to_tensor(it->second));
  ASSERT_FALSE(rec.empty()) << "fixture file has no records for " << prefix
                            << " (regenerate with make_fixtures.py)";

  Inputs inputs;
  for (const auto& [name, t] : rec) {
    if (!is_input_name(name)) continue;
    Tensor leaf = t;
    if (leaf.is_floating_point()) {
      ASSERT_EQ(leaf.dtype(), f64 ? DType::Float64 : DType::Float32) << prefix << name;
      leaf.requires_grad_();
    }
    inputs.emplace(name, leaf);
  }

  if (!f64 && !pc.exact) {
    check_float32_case(pc, rec, inputs, prefix);
    return;
  }

  std::vector<Tensor> outs;
  try {
    outs = pc.fn(inputs);
  } catch (const Error& e) {
    FAIL() << prefix << " forward threw: " << e.what();
  }

  // Forward, and loss = sum_k sum(out_k * w_k) over the float outputs.
  Tensor loss;
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string out_name = fmt::format("out{}", k), w_name = fmt::format("w{}", k);
    ASSERT_TRUE(rec.count(out_name)) << prefix << out_name << " missing from the fixture file";
    check_tensor(rec.at(out_name), outs[k], prefix + out_name, tol);
    if (rec.count(w_name)) {
      const Tensor term = sum(outs[k] * rec.at(w_name));
      loss = loss.defined() ? loss + term : term;
    }
  }
  EXPECT_FALSE(rec.count(fmt::format("out{}", outs.size())))
      << prefix << ": the fixture has more outputs than the C++ case returns";
  ASSERT_TRUE(loss.defined()) << prefix << " has no float output to differentiate";

  try {
    backward(loss);
  } catch (const Error& e) {
    FAIL() << prefix << " backward threw: " << e.what();
  }

  // Gradients: one grad.<input> record per float input.
  for (const auto& [name, leaf] : inputs) {
    if (!leaf.is_floating_point()) continue;
    const std::string grad_name = fmt::format("grad.{}", name);
    ASSERT_TRUE(rec.count(grad_name)) << prefix << grad_name << " missing from the fixture file";
    const Tensor& expected = rec.at(grad_name);
    // torch gives None for an input the loss does not reach; the fixture writes zeros.
    const Tensor actual = leaf.grad().defined() ? leaf.grad() : zeros_like(expected);
    check_tensor(expected, actual, prefix + grad_name, tol);
  }
}

std::vector<ParityParam> all_params() {
  std::vector<ParityParam> params;
  for (int i = 0; i < static_cast<int>(parity_cases().size()); ++i) {
    params.push_back({i, true});
    params.push_back({i, false});
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Ops, Parity, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<ParityParam>& info) {
                           return parity_cases()[info.param.case_index].name +
                                  (info.param.f64 ? "_f64" : "_f32");
                         });

// ---- the fixture file itself -----------------------------------------------------------

// Every case in the file has a C++ counterpart and the other way round, so a
// case added to make_fixtures.py cannot go silently untested.
TEST(ParityFixture, FileAndCaseTableCoverEachOther) {
  const Loaded& loaded = fixtures();
  ASSERT_TRUE(loaded.error.empty()) << loaded.error;
  std::set<std::string> in_file;
  for (const auto& [name, r] : loaded.fixture.records)
    in_file.insert(name.substr(0, name.find('/')));
  std::set<std::string> in_table;
  for (const auto& c : parity_cases()) in_table.insert(c.name);
  for (const auto& n : in_file)
    EXPECT_TRUE(in_table.count(n)) << "fixture case '" << n << "' has no C++ case";
  for (const auto& n : in_table)
    EXPECT_TRUE(in_file.count(n)) << "C++ case '" << n << "' is not in the fixture file";
  EXPECT_EQ(in_table.size(), parity_cases().size()) << "duplicate case name in the C++ table";
}

std::string parse_error_of(const std::string& text) {
  std::istringstream in(text);
  Fixture f;
  return parse_fixture(in, f);
}

TEST(ParityFixture, ParserAcceptsAWellFormedFile) {
  std::istringstream in(
      "ropegrad-fixtures 1\n# comment\n"
      "c/f64/x float64 2 2 1 0x1.8p+0 -0x1p-2\n"
      "c/f64/s float32 0 0x1p+0\n"
      "c/f64/i int64 1 3 4 -1 0\n"
      "c/f64/m bool 1 2 1 0\n"
      "end 4\n");
  Fixture f;
  ASSERT_EQ(parse_fixture(in, f), "");
  ASSERT_EQ(f.records.size(), 4u);
  EXPECT_EQ(f.records.at("c/f64/x").shape, (Shape{2, 1}));
  EXPECT_EQ(f.records.at("c/f64/x").floats, (std::vector<double>{1.5, -0.25}));
  const Tensor s = to_tensor(f.records.at("c/f64/s"));  // 0-d stays 0-d
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 1.0);
  EXPECT_EQ(f.records.at("c/f64/i").ints, (std::vector<int64_t>{4, -1, 0}));
  EXPECT_EQ(to_tensor(f.records.at("c/f64/m")).dtype(), DType::Bool);
}

::testing::AssertionResult error_mentions(const std::string& msg, const std::string& part) {
  if (msg.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "parse error '" << msg << "' does not mention '" << part
                                       << "'";
}

TEST(ParityFixture, ParserRejectsCorruptFilesWithAMessage) {
  // The error for a file made of the header and `body`.
  const auto body_error = [](const std::string& body) {
    return parse_error_of("ropegrad-fixtures 1\n" + body);
  };
  EXPECT_TRUE(error_mentions(parse_error_of(""), "header"));
  EXPECT_TRUE(error_mentions(parse_error_of("not-a-fixture\nend 0\n"), "header"));
  // Truncated: no trailer.
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 1 2 0x1p+0 0x1p+0\n"), "trailer"));
  // Trailer count disagrees (a record lost).
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 1 1 0x1p+0\nend 2\n"), "2 records"));
  // Too few / too many values for the shape.
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 2 2 2 1 2 3\nend 1\n"),
                  "[2, 2] (4 values) but 3 values"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 1 1 1 2\nend 1\n"), "more than 1"));
  // Garbage numbers, dtypes and sizes.
  EXPECT_TRUE(
      error_mentions(body_error("c/f64/x float64 1 1 1.5abc\nend 1\n"), "bad number '1.5abc'"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x int64 1 1 7.5\nend 1\n"), "bad int64 '7.5'"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x bool 1 1 2\nend 1\n"), "bad bool '2'"));
  EXPECT_TRUE(
      error_mentions(body_error("c/f64/x float16 1 1 0\nend 1\n"), "unknown dtype 'float16'"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 1 -3\nend 1\n"), "bad size of dim 0"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64\nend 1\n"), "line 2"));
  EXPECT_TRUE(error_mentions(body_error("c/f64/x float64 0 1\nc/f64/x float64 0 1\nend 2\n"),
                  "duplicate record"));
}

}  // namespace

// ---- the float32 error bound itself -------------------------------------------------------

namespace {

// sum(x * y) in float32, in the given order of the K terms.
float dot32(const std::vector<float>& x, const std::vector<float>& y, bool reversed) {
  float s = 0;
  for (size_t n = 0; n < x.size(); ++n) {
    const size_t i = reversed ? x.size() - 1 - n : n;
    s += x[i] * y[i];
  }
  return s;
}

}  // namespace

// Two summation orders of the same float32 dot products stay within the bound
// (the situation of two BLAS kernels), while a result off by 1e-4 relative, or
// the transposed answer, is rejected: the bound is no blanket.
TEST(Float32Bound, AcceptsAnotherSummationOrderAndRejectsWrongResults) {
  using namespace ropegrad::testing;
  const int64_t rows = 8, k = 64;
  Generator gen(7);
  const Tensor a = to(randn({rows, k}, DType::Float64, &gen), DType::Float32);
  const Tensor b = to(randn({rows, k}, DType::Float64, &gen), DType::Float32);
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  std::vector<double> forward, backward_order, cond;
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> x(av.begin() + r * k, av.begin() + (r + 1) * k), y(bv.begin() + r * k, bv.begin() + (r + 1) * k);
    forward.push_back(dot32(x, y, false));
    backward_order.push_back(dot32(x, y, true));
    double c = 0;  // d(sum x y)/dx_i x_i + d/dy_i y_i: each term counted twice
    for (int64_t i = 0; i < k; ++i) c += 2 * std::abs(static_cast<double>(x[i]) * y[i]);
    cond.push_back(c);
  }
  const Tensor f = tensor(forward, {rows}, DType::Float32), g = tensor(backward_order, {rows}, DType::Float32);
  const Tensor c = tensor(cond, {rows}, DType::Float64);
  const F32Bound bound{k, 1};
  EXPECT_TRUE(within_f32_bound(f, g, c, bound));
  EXPECT_FALSE(within_f32_bound(mul(f, 1 + 1e-4), g, c, bound)) << "a result off by 1e-4 relative";
  std::vector<double> swapped = forward;
  std::swap(swapped[0], swapped[1]);
  EXPECT_FALSE(within_f32_bound(tensor(swapped, {rows}, DType::Float32), g, c, bound)) << "two rows swapped";
}
