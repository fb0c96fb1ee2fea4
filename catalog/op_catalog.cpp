#include "catalog/op_catalog.h"

#include <algorithm>
#include <numeric>

#include "autograd/ops.h"
#include "io/fnv1a.h"

namespace ropegrad {

std::vector<Tensor> make_inputs(const OpCase& c, uint64_t seed) {
  // FNV-1a of the case's name: the same inputs with every standard library.
  const uint64_t name_hash = fnv1a(c.op + c.shapes);
  Generator gen(seed * 7919 + name_hash % 100003);
  std::vector<Tensor> inputs;
  for (const InputSpec& spec : c.inputs) {
    Tensor t;
    switch (spec.kind) {
      case InputKind::Normal: t = randn(spec.shape, DType::Float64, &gen); break;
      case InputKind::Positive: t = kernels::binary(kernels::Binary::Add, rand(spec.shape, DType::Float64, &gen) * 1.5, 0.5); break;
      case InputKind::AwayFromZero: {
        const Tensor magnitude = rand(spec.shape, DType::Float64, &gen) * 0.8 + 0.2;
        const Tensor sign = kernels::where(lt(rand(spec.shape, DType::Float64, &gen), 0.5), full({}, -1.0, DType::Float64),
                                           full({}, 1.0, DType::Float64));
        t = magnitude * sign;
        break;
      }
      case InputKind::Distinct: {
        std::vector<double> grid(static_cast<size_t>(numel_of(spec.shape)));
        // A random offset per input, so two inputs never share a value (no ties between them).
        const double offset = 0.005 + 0.09 * gen.uniform();
        for (size_t i = 0; i < grid.size(); ++i) {
          grid[i] = 0.1 * static_cast<double>(i) - 0.05 * static_cast<double>(grid.size()) + offset;
        }
        for (size_t i = grid.size(); i > 1; --i) std::swap(grid[i - 1], grid[gen.integer(0, static_cast<int64_t>(i))]);
        t = tensor(grid, spec.shape, DType::Float64);
        break;
      }
      case InputKind::Ids: t = randint(0, spec.bound, spec.shape, &gen); break;
      case InputKind::Mask: t = lt(rand(spec.shape, DType::Float64, &gen), 0.5); break;
    }
    if (is_floating(t.dtype())) t = t.detach().requires_grad_();
    inputs.push_back(t);
  }
  return inputs;
}

namespace {

using In = const std::vector<Tensor>&;
constexpr auto P = InputKind::Positive;
constexpr auto Z = InputKind::AwayFromZero;
constexpr auto D = InputKind::Distinct;

// The cases, as each family adds them: op, the shapes in words, the inputs, the function.
struct Cases {
  std::vector<OpCase> list;
  void add(std::string op, std::string shapes, std::vector<InputSpec> inputs, GradcheckFn fn) {
    list.push_back({std::move(op), std::move(shapes), std::move(inputs), std::move(fn)});
  }
};

// elementwise binary, with broadcasting and non-contiguous operands
void add_elementwise_binary(Cases& c) {
  c.add("add", "[3, 4] + [3, 4]", {{{3, 4}}, {{3, 4}}}, [](In x) { return x[0] + x[1]; });
  c.add("add", "[3, 4] + [4] (broadcast)", {{{3, 4}}, {{4}}}, [](In x) { return x[0] + x[1]; });
  c.add("add", "[2, 1, 3] + [4, 1] (both broadcast)", {{{2, 1, 3}}, {{4, 1}}}, [](In x) { return x[0] + x[1]; });
  c.add("add", "[3, 4] + scalar", {{{3, 4}}}, [](In x) { return x[0] + 2.5; });
  c.add("sub", "[3, 4] - [3, 1]", {{{3, 4}}, {{3, 1}}}, [](In x) { return x[0] - x[1]; });
  c.add("sub", "scalar - [5]", {{{5}}}, [](In x) { return 1.0 - x[0]; });
  c.add("mul", "[3, 4] * [4]", {{{3, 4}}, {{4}}}, [](In x) { return x[0] * x[1]; });
  c.add("mul", "[4, 3]^T * [3, 4] (transposed view)", {{{4, 3}}, {{3, 4}}},
      [](In x) { return transpose(x[0], 0, 1) * x[1]; });
  c.add("mul", "x * x (same tensor twice)", {{{5}}}, [](In x) { return x[0] * x[0]; });
  c.add("mul", "[3] * scalar", {{{3}}}, [](In x) { return x[0] * -3.0; });
  c.add("div", "[3, 4] / [3, 4]", {{{3, 4}}, {{3, 4}, P}}, [](In x) { return x[0] / x[1]; });
  c.add("div", "[2, 3] / [3] (broadcast)", {{{2, 3}}, {{3}, P}}, [](In x) { return x[0] / x[1]; });
  c.add("div", "scalar / [4]", {{{4}, P}}, [](In x) { return 2.0 / x[0]; });
  c.add("div", "[4] / scalar", {{{4}}}, [](In x) { return x[0] / 4.0; });
  c.add("maximum", "[3, 4] vs [4]", {{{3, 4}, D}, {{4}, D}}, [](In x) { return maximum(x[0], x[1]); });
  c.add("minimum", "[3, 4] vs [3, 4]", {{{3, 4}, D}, {{3, 4}, D}}, [](In x) { return minimum(x[0], x[1]); });
  c.add("pow", "[3, 4] ^ 3", {{{3, 4}}}, [](In x) { return pow(x[0], 3); });
  c.add("pow", "[5] ^ 0.5", {{{5}, P}}, [](In x) { return pow(x[0], 0.5); });
  c.add("pow", "[5] ^ -2.0", {{{5}, P}}, [](In x) { return pow(x[0], -2.0); });
  c.add("pow", "[2, 3] ^ [3] (tensor exponent)", {{{2, 3}, P}, {{3}}}, [](In x) { return pow(x[0], x[1]); });
}

// elementwise unary (kinks avoided by the input kinds)
void add_elementwise_unary(Cases& c) {
  c.add("neg", "[3, 4]", {{{3, 4}}}, [](In x) { return -x[0]; });
  c.add("exp", "[3, 4]", {{{3, 4}}}, [](In x) { return exp(x[0]); });
  c.add("exp", "[4, 3]^T (non-contiguous)", {{{4, 3}}}, [](In x) { return exp(transpose(x[0], 0, 1)); });
  c.add("log", "[3, 4]", {{{3, 4}, P}}, [](In x) { return log(x[0]); });
  c.add("sqrt", "[3, 4]", {{{3, 4}, P}}, [](In x) { return sqrt(x[0]); });
  c.add("rsqrt", "[3, 4]", {{{3, 4}, P}}, [](In x) { return rsqrt(x[0]); });
  c.add("abs", "[3, 4]", {{{3, 4}, Z}}, [](In x) { return abs(x[0]); });
  c.add("sin", "[3, 4]", {{{3, 4}}}, [](In x) { return sin(x[0]); });
  c.add("cos", "[3, 4]", {{{3, 4}}}, [](In x) { return cos(x[0]); });
  c.add("tanh", "[3, 4]", {{{3, 4}}}, [](In x) { return tanh(x[0]); });
  c.add("sigmoid", "[3, 4]", {{{3, 4}}}, [](In x) { return sigmoid(x[0]); });
  c.add("relu", "[3, 4]", {{{3, 4}, Z}}, [](In x) { return relu(x[0]); });
  c.add("silu", "[3, 4]", {{{3, 4}}}, [](In x) { return silu(x[0]); });
  c.add("softplus", "[3, 4]", {{{3, 4}}}, [](In x) { return softplus(x[0]); });
  c.add("softplus", "[6] * 30 (both sides of the threshold 20)", {{{6}, Z}}, [](In x) { return softplus(x[0] * 30.0); });
  c.add("clamp", "[3, 4] to [-0.5, 0.5]", {{{3, 4}, Z}}, [](In x) { return clamp(x[0] * 0.7, -0.5, 0.5); });
  c.add("where", "mask [3, 4], [3, 4], [4]", {{{3, 4}, InputKind::Mask}, {{3, 4}}, {{4}}},
      [](In x) { return where(x[0], x[1], x[2]); });
  c.add("masked_fill", "[3, 4] with mask [4]", {{{3, 4}}, {{4}, InputKind::Mask}},
      [](In x) { return masked_fill(x[0], x[1], -1.0); });
  c.add("tril", "[2, 4, 4]", {{{2, 4, 4}}}, [](In x) { return tril(x[0]); });
  c.add("triu", "[3, 5], diagonal 1", {{{3, 5}}}, [](In x) { return triu(x[0], 1); });
}

// reductions
void add_reductions(Cases& c) {
  c.add("sum", "[3, 4] all", {{{3, 4}}}, [](In x) { return sum(x[0]); });
  c.add("sum", "[2, 3, 4] dims {0, 2}", {{{2, 3, 4}}}, [](In x) { return sum(x[0], {0, 2}); });
  c.add("sum", "[2, 3, 4] dim -1 keepdim", {{{2, 3, 4}}}, [](In x) { return sum(x[0], {-1}, true); });
  c.add("sum", "reshape [2, 6] -> [3, 4] + [4] broadcast", {{{2, 6}}, {{4}}},
      [](In x) { return sum(reshape(x[0], {3, 4}) + x[1], {0}); });
  c.add("mean", "[3, 4] dim 1", {{{3, 4}}}, [](In x) { return mean(x[0], {1}); });
  c.add("mean", "[2, 3, 4] all", {{{2, 3, 4}}}, [](In x) { return mean(x[0]); });
  c.add("amax", "[3, 4] dim 1", {{{3, 4}, D}}, [](In x) { return amax(x[0], {1}); });
  c.add("amin", "[2, 3, 4] dims {0, 1} keepdim", {{{2, 3, 4}, D}}, [](In x) { return amin(x[0], {0, 1}, true); });
  c.add("max", "[3, 4] all", {{{3, 4}, D}}, [](In x) { return max(x[0]); });
  c.add("max", "[3, 4] dim 0 (values)", {{{3, 4}, D}}, [](In x) { return max(x[0], 0).first; });
  c.add("min", "[2, 3, 4] dim -1 keepdim (values)", {{{2, 3, 4}, D}}, [](In x) { return min(x[0], -1, true).first; });
  c.add("logsumexp", "[3, 4] dim 1", {{{3, 4}}}, [](In x) { return logsumexp(x[0], {1}); });
  c.add("logsumexp", "[2, 3, 4] dims {0, 2} keepdim", {{{2, 3, 4}}}, [](In x) { return logsumexp(x[0], {0, 2}, true); });
  c.add("softmax", "[3, 5] dim -1", {{{3, 5}}}, [](In x) { return softmax(x[0], -1); });
  c.add("softmax", "[3, 4, 2] dim 1", {{{3, 4, 2}}}, [](In x) { return softmax(x[0], 1); });
  c.add("log_softmax", "[3, 5] dim -1", {{{3, 5}}}, [](In x) { return log_softmax(x[0], -1); });
  c.add("log_softmax", "[4, 3] dim 0", {{{4, 3}}}, [](In x) { return log_softmax(x[0], 0); });
  c.add("sum_to", "[2, 3, 4] -> [3, 1]", {{{2, 3, 4}}}, [](In x) { return sum_to(x[0], {3, 1}); });
}

// views and shape ops
void add_views(Cases& c) {
  c.add("view", "[2, 6] -> [3, 4]", {{{2, 6}}}, [](In x) { return view(x[0], {3, 4}); });
  c.add("reshape", "[4, 3]^T -> [12] (copies)", {{{4, 3}}}, [](In x) { return reshape(transpose(x[0], 0, 1), {12}); });
  c.add("permute", "[2, 3, 4] -> (2, 0, 1)", {{{2, 3, 4}}}, [](In x) { return permute(x[0], {2, 0, 1}); });
  c.add("transpose", "[2, 3, 4] dims 0, 2", {{{2, 3, 4}}}, [](In x) { return transpose(x[0], 0, 2); });
  c.add("narrow", "[4, 5] dim 1, start 1, length 3", {{{4, 5}}}, [](In x) { return narrow(x[0], 1, 1, 3); });
  c.add("slice", "[6, 3] rows 1:6:2", {{{6, 3}}}, [](In x) { return slice(x[0], 0, 1, 6, 2); });
  c.add("select", "[3, 4] dim 0, index -1", {{{3, 4}}}, [](In x) { return select(x[0], 0, -1); });
  c.add("expand", "[3, 1] -> [2, 3, 4]", {{{3, 1}}}, [](In x) { return expand(x[0], {2, 3, 4}); });
  c.add("squeeze", "[3, 1, 4]", {{{3, 1, 4}}}, [](In x) { return squeeze(x[0]); });
  c.add("unsqueeze", "[3, 4] dim 1", {{{3, 4}}}, [](In x) { return unsqueeze(x[0], 1); });
  c.add("flatten", "[2, 3, 4] dims 1..2", {{{2, 3, 4}}}, [](In x) { return flatten(x[0], 1); });
  c.add("contiguous", "[4, 3]^T", {{{4, 3}}}, [](In x) { return contiguous(transpose(x[0], 0, 1)); });
  c.add("clone", "[3, 4]", {{{3, 4}}}, [](In x) { return clone(x[0]); });
  c.add("cat", "[2, 3] ++ [4, 3] dim 0", {{{2, 3}}, {{4, 3}}}, [](In x) { return cat({x[0], x[1]}, 0); });
  c.add("stack", "[3] [3] [3] dim 1", {{{3}}, {{3}}, {{3}}}, [](In x) { return stack({x[0], x[1], x[2]}, 1); });
  c.add("split", "[5, 2] into 2 + 2 + 1 (weighted)", {{{5, 2}}}, [](In x) {
    const auto parts = split(x[0], 2);
    return sum(parts[0]) + 2.0 * sum(parts[1]) + 3.0 * sum(parts[2]);
  });
  c.add("chunk", "[2, 6] into 3 along dim 1", {{{2, 6}}}, [](In x) {
    const auto parts = chunk(x[0], 3, 1);
    return parts[0] * parts[2] + parts[1];
  });
}

// indexing
void add_indexing(Cases& c) {
  c.add("index_select", "[5, 3] rows {4, 0, 4}", {{{5, 3}}}, [](In x) {
    return index_select(x[0], 0, tensor_i64({4, 0, 4}));
  });
  c.add("embedding", "ids [2, 3] into weight [6, 4]", {{{2, 3}, InputKind::Ids, 6}, {{6, 4}}},
      [](In x) { return embedding(x[0], x[1]); });
  c.add("gather", "[3, 5] dim 1 with ids [3, 2]", {{{3, 5}}, {{3, 2}, InputKind::Ids, 5}},
      [](In x) { return gather(x[0], 1, x[1]); });
}

// matmul: every torch.matmul shape rule, and transposed views
void add_matmul(Cases& c) {
  c.add("matmul", "[3, 4] @ [4, 2]", {{{3, 4}}, {{4, 2}}}, [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[4] @ [4]", {{{4}}, {{4}}}, [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[4] @ [4, 3]", {{{4}}, {{4, 3}}}, [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[3, 4] @ [4]", {{{3, 4}}, {{4}}}, [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[2, 3, 4] @ [4, 2] (shared weight)", {{{2, 3, 4}}, {{4, 2}}}, [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[2, 1, 3, 4] @ [2, 4, 2] (broadcast batch)", {{{2, 1, 3, 4}}, {{2, 4, 2}}},
      [](In x) { return matmul(x[0], x[1]); });
  c.add("matmul", "[4, 3]^T @ [2, 4]^T (transposed views)", {{{4, 3}}, {{2, 4}}},
      [](In x) { return matmul(transpose(x[0], 0, 1), transpose(x[1], 0, 1)); });
  c.add("matmul", "[3, 4] @ [4] (vector from a strided slice)", {{{3, 4}}, {{4, 2}}},
      [](In x) { return matmul(x[0], select(x[1], 1, 1)); });
}

std::vector<OpCase> build() {
  Cases c;
  add_elementwise_binary(c);
  add_elementwise_unary(c);
  add_reductions(c);
  add_views(c);
  add_indexing(c);
  add_matmul(c);
  return std::move(c.list);
}

}  // namespace

const std::vector<OpCase>& op_catalog() {
  static const std::vector<OpCase> cases = build();
  return cases;
}

}  // namespace ropegrad
