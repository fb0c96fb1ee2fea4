// gradcheck: every op in the catalogue against finite differences, and
// gradcheck itself against the backward mistakes learners make (each one a
// custom Function with a deliberately wrong rule): does it fail, and does its
// diagnosis name the mistake?
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/function.h"
#include "autograd/gradcheck.h"
#include "catalog/op_catalog.h"
#include "autograd/ops.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// ---- the catalogue ----------------------------------------------------------------------

class OpCatalog : public ::testing::TestWithParam<size_t> {};

TEST_P(OpCatalog, GradcheckPasses) {
  const OpCase& c = op_catalog()[GetParam()];
  SCOPED_TRACE(c.op + " " + c.shapes);
  for (uint64_t seed : {0, 1}) {
    const std::vector<Tensor> inputs = make_inputs(c, seed);
    const GradcheckResult r = gradcheck(c.fn, inputs);
    EXPECT_TRUE(r.passed) << "seed " << seed << ":\n" << r.report;
    if (r.passed) {
      EXPECT_LE(r.max_abs_error, 1e-4) << "seed " << seed;
    }
  }
}

TEST(OpCatalogContents, CoversTheCoreOps) {
  std::vector<std::string> ops;
  for (const OpCase& c : op_catalog()) ops.push_back(c.op);
  for (const char* op : {"add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "tanh", "sigmoid",
                         "relu", "silu", "where", "sum", "mean", "amax", "logsumexp", "softmax",
                         "log_softmax", "view", "reshape", "transpose", "narrow", "expand", "cat",
                         "embedding", "gather", "matmul"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op << " is not in the catalogue";
  }
}

TEST(OpCatalogContents, SecondSeedDrawsDifferentInputs) {
  const OpCase& c = op_catalog().front();
  const auto a = make_inputs(c, 0), b = make_inputs(c, 1), a2 = make_inputs(c, 0);
  EXPECT_NE(a[0].to_vector<double>(), b[0].to_vector<double>());
  EXPECT_EQ(a[0].to_vector<double>(), a2[0].to_vector<double>());  // deterministic
  EXPECT_TRUE(a[0].requires_grad());
  EXPECT_TRUE(a[0].is_leaf());
  EXPECT_EQ(a[0].dtype(), kF64);
}

// "matmul_93": the op and its index, with anything but letters and digits as '_'.
std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = op_catalog()[info.param].op + "_" + std::to_string(info.param);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpCatalog, ::testing::Range<size_t>(0, op_catalog().size()),
                         case_name);

// ---- what gradcheck refuses ------------------------------------------------------------

TEST(GradcheckInputs, RefusesFloat32) {
  Tensor x = tensor({1, 2, 3}, DType::Float32).requires_grad_();
  const std::string msg =
      error_of([&] { gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {x}); });
  EXPECT_THAT(msg, HasSubstr("gradcheck"));
  EXPECT_THAT(msg, HasSubstr("float64"));
  EXPECT_THAT(msg, HasSubstr("float32"));
  EXPECT_THAT(msg, HasSubstr("[3]"));
}

TEST(GradcheckInputs, RefusesWhenNothingRequiresGrad) {
  Tensor x = tensor({1, 2, 3}, kF64);
  const std::string msg =
      error_of([&] { gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {x}); });
  EXPECT_THAT(msg, HasSubstr("gradcheck"));
  EXPECT_THAT(msg, HasSubstr("no input requires grad"));
}

TEST(GradcheckInputs, NonDifferentiableInputsPassThrough) {
  // int64 ids next to a float64 weight: only the weight is checked.
  Tensor ids = tensor_i64({2, 0, 2});
  Tensor w = param({1, 2, 3, 4, 5, 6}, {3, 2});
  const GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return embedding(in[0], in[1]) * 2.0; }, {ids, w});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(GradcheckInputs, LeavesTheInputsGradAsItWas) {
  Tensor x = param({0.1, 0.2, 0.3});
  Tensor y = param({1.0, 2.0, 3.0});
  x.set_grad(tensor({7, 8, 9}, kF64));  // an accumulated gradient the caller cares about
  const Tensor before = x.grad();
  const GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return sin(in[0]) * in[1]; }, {x, y});
  EXPECT_TRUE(r.passed) << r.report;
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(x.grad().is_same(before));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{7, 8, 9}));
  EXPECT_FALSE(y.grad().defined());  // undefined stays undefined
  // ...and the inputs' values are restored after the finite differences.
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1.0, 2.0, 3.0}));
}

// ---- wrong rules, and their right versions -------------------------------------------

namespace {

using Fn = GradcheckFn;
using In = const std::vector<Tensor>&;

// sin, with d sin = cos (right) or -cos (wrong sign).
template <bool kRight>
struct Sin : Function<Sin<kRight>> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return sin(x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor c = g * cos(ctx.saved_tensors()[0]);
    return {kRight ? c : -c};
  }
};

// x^2 with d(x^2) = factor * x: 2 is right, 4 counts a term twice, 1 misses one.
template <int kFactor>
struct Square : Function<Square<kFactor>> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    return {g * ctx.saved_tensors()[0] * static_cast<double>(kFactor)};
  }
};

// A @ B for a constant B: dA = g B^T (right) or (g B^T)^T (transposed).
template <bool kRight>
struct MatmulConst : Function<MatmulConst<kRight>> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor da = matmul(g, transpose(ctx.saved_tensors()[0], 0, 1));
    return {kRight ? da : transpose(da, 0, 1), Tensor()};
  }
};

// a [3, 4] + b [4]: b was used 3 times, so db = sum of g over dim 0.
enum class BroadcastRule { Summed, NotSummed, Averaged };
template <BroadcastRule kRule>
struct AddRow : Function<AddRow<kRule>> {
  static Tensor forward(FunctionCtx&, const Tensor& a, const Tensor& b) { return a + b; }
  static Grads backward(FunctionCtx&, const Tensor& g) {
    switch (kRule) {
      case BroadcastRule::Summed: return {g, sum(g, {0})};
      case BroadcastRule::NotSummed: return {g, g};
      case BroadcastRule::Averaged: return {g, mean(g, {0})};
    }
    return {};
  }
};

// exp with a gradient that is all zeros (a rule that forgot its input).
struct ExpZeroGrad : Function<ExpZeroGrad> {
  static Tensor forward(FunctionCtx&, const Tensor& x) { return exp(x); }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {zeros_like(g)}; }
};

// exp whose backward forgets the input altogether (an undefined gradient).
struct ExpNoGrad : Function<ExpNoGrad> {
  static Tensor forward(FunctionCtx&, const Tensor& x) { return exp(x); }
  static Grads backward(FunctionCtx&, const Tensor&) { return {Tensor()}; }
};

// Checks what every failing report must say: the input, an element index, and
// the numerical and analytical values, and that the worst entry is truly wrong.
void expect_readable_failure(const GradcheckResult& r, size_t input, const Shape& input_shape) {
  EXPECT_FALSE(r.passed);
  ASSERT_FALSE(r.worst.empty()) << r.report;
  const GradcheckEntry& w = r.worst.front();
  EXPECT_EQ(w.input, input);
  ASSERT_EQ(w.input_index.size(), input_shape.size());
  for (size_t d = 0; d < input_shape.size(); ++d) {
    EXPECT_GE(w.input_index[d], 0);
    EXPECT_LT(w.input_index[d], input_shape[d]);
  }
  EXPECT_GT(std::abs(w.analytical - w.numerical), 1e-5 + 1e-3 * std::abs(w.numerical));
  EXPECT_GE(r.max_abs_error, std::abs(w.analytical - w.numerical) - 1e-12);
  EXPECT_THAT(r.report, HasSubstr("input " + std::to_string(input)));
  EXPECT_THAT(r.report, HasSubstr("input" + std::to_string(input) + shape_str(w.input_index)));
  EXPECT_THAT(r.report, HasSubstr("numerical"));
  EXPECT_THAT(r.report, HasSubstr("analytical"));
  EXPECT_THAT(r.report, HasSubstr(fmt::format("{:.8g}", w.numerical)));
  EXPECT_THAT(r.report, HasSubstr(fmt::format("{:.8g}", w.analytical)));
  EXPECT_THAT(r.report, HasSubstr(r.diagnosis));
}

Tensor sample(Shape shape, uint64_t seed) {
  Generator gen(seed);
  return randn(shape, kF64, &gen).requires_grad_();
}

}  // namespace

TEST(WrongRules, WrongSign) {
  Tensor x = sample({2, 3}, 1);
  const GradcheckResult r = gradcheck([](In in) { return Sin<false>::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {2, 3});
  EXPECT_THAT(r.diagnosis, HasSubstr("wrong sign"));
  // Elementwise: the worst entry is on the diagonal, numerical = cos(x), analytical = -cos(x).
  const GradcheckEntry& w = r.worst.front();
  EXPECT_EQ(w.output_index, w.input_index);
  const double xv = x.at({w.input_index[0], w.input_index[1]});
  EXPECT_NEAR(w.numerical, std::cos(xv), 1e-6);
  EXPECT_NEAR(w.analytical, -std::cos(xv), 1e-12);
  // All 6 diagonal entries are wrong (none of the x's is near a zero of cos).
  EXPECT_THAT(r.report, HasSubstr("6 of 36"));
}

TEST(WrongRules, FactorOfTwoTooBig) {
  Tensor x = sample({4}, 2);
  const GradcheckResult r = gradcheck([](In in) { return Square<4>::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {4});
  EXPECT_THAT(r.diagnosis, HasSubstr("factor of two"));
  EXPECT_THAT(r.diagnosis, HasSubstr("2 x"));
  // Only the factor was measured: a term counted twice, an extra 1/0.5, ... the Jacobians cannot tell.
  EXPECT_EQ(r.diagnosis, "a factor of two: the analytical gradient is 2 x the numerical one");
  const GradcheckEntry& w = r.worst.front();
  const double xv = x.at({w.input_index[0]});
  EXPECT_NEAR(w.numerical, 2 * xv, 1e-6);
  EXPECT_NEAR(w.analytical, 4 * xv, 1e-12);
}

TEST(WrongRules, FactorOfTwoTooSmall) {
  Tensor x = sample({4}, 3);
  const GradcheckResult r = gradcheck([](In in) { return Square<1>::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {4});
  EXPECT_THAT(r.diagnosis, HasSubstr("factor of two"));
  EXPECT_THAT(r.diagnosis, HasSubstr("1/2"));
  EXPECT_EQ(r.diagnosis, "a factor of two: the analytical gradient is 1/2 x the numerical one");
  const GradcheckEntry& w = r.worst.front();
  const double xv = x.at({w.input_index[0]});
  EXPECT_NEAR(w.numerical, 2 * xv, 1e-6);
  EXPECT_NEAR(w.analytical, xv, 1e-12);
}

TEST(WrongRules, TransposedGradient) {
  Tensor a = sample({3, 3}, 4);
  Tensor b = tensor({1, 2, 0, -1, 0.5, 3, 2, -2, 1}, {3, 3}, kF64);  // constant, not symmetric
  const GradcheckResult r =
      gradcheck([](In in) { return MatmulConst<false>::apply(in[0], in[1]); }, {a, b});
  expect_readable_failure(r, 0, {3, 3});
  EXPECT_THAT(r.diagnosis, HasSubstr("transposed"));
  // d (A B)[i, j] / d A[p, q] = [i == p] B[q, j]: the numerical side of the worst entry.
  const GradcheckEntry& w = r.worst.front();
  const double expected = (w.output_index[0] == w.input_index[0])
                              ? b.at({w.input_index[1], w.output_index[1]})
                              : 0.0;
  EXPECT_NEAR(w.numerical, expected, 1e-6);
}

TEST(WrongRules, BroadcastGradientNotSummed) {
  Tensor a = sample({3, 4}, 5);
  Tensor b = sample({4}, 6);
  GradcheckResult r;
  EXPECT_NO_THROW(r = gradcheck(
                      [](In in) { return AddRow<BroadcastRule::NotSummed>::apply(in[0], in[1]); },
                      {a, b}));
  EXPECT_FALSE(r.passed);
  EXPECT_THAT(r.diagnosis, HasSubstr("backward raised an error"));
  EXPECT_THAT(r.report, HasSubstr("[3, 4]"));  // the gradient it returned
  EXPECT_THAT(r.report, HasSubstr("[4]"));     // the input's shape
  EXPECT_THAT(r.report, HasSubstr("input 1"));
  EXPECT_THAT(r.report, HasSubstr("broadcast"));
  EXPECT_THAT(r.report, HasSubstr("sum_to"));
  // The failed backward left no partial gradient behind.
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(WrongRules, BroadcastGradientAveragedInsteadOfSummed) {
  Tensor a = sample({3, 4}, 7);
  Tensor b = sample({4}, 8);
  const GradcheckResult r = gradcheck(
      [](In in) { return AddRow<BroadcastRule::Averaged>::apply(in[0], in[1]); }, {a, b});
  expect_readable_failure(r, 1, {4});  // input 0 is right, input 1 is a third of the truth
  EXPECT_THAT(r.diagnosis, HasSubstr("constant factor"));
  EXPECT_THAT(r.diagnosis, HasSubstr("0.333333"));
  // The factor made of the sizes, no cause guessed (an average, or any other scale of 1/3).
  EXPECT_THAT(r.diagnosis, HasSubstr("0.333333 = 1/3; 3 is the size of the output's dim 0 (input 1 is broadcast over it)"));
  EXPECT_THAT(r.diagnosis, ::testing::Not(HasSubstr("?")));
  EXPECT_THAT(r.report, ::testing::Not(HasSubstr("input 0 ")));
  const GradcheckEntry& w = r.worst.front();
  EXPECT_EQ(w.output_index[1], w.input_index[0]);  // b[k] reaches column k only
  EXPECT_NEAR(w.numerical, 1.0, 1e-6);
  EXPECT_NEAR(w.analytical, 1.0 / 3.0, 1e-12);
}

TEST(WrongRules, AllZeroGradient) {
  Tensor x = sample({5}, 9);
  const GradcheckResult r = gradcheck([](In in) { return ExpZeroGrad::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {5});
  EXPECT_THAT(r.diagnosis, HasSubstr("all zeros"));
  EXPECT_THAT(r.diagnosis, HasSubstr("the backward reaches this input and gives it 0 for every output"));
  const GradcheckEntry& w = r.worst.front();
  EXPECT_NEAR(w.numerical, std::exp(x.at({w.input_index[0]})), 1e-5);
  EXPECT_EQ(w.analytical, 0.0);
}

// An undefined gradient is told from a gradient of zeros: what the backward did is what was seen.
TEST(WrongRules, UndefinedGradientIsNamedAsNoGradient) {
  Tensor x = sample({5}, 10);
  const GradcheckResult r = gradcheck([](In in) { return ExpNoGrad::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {5});
  EXPECT_THAT(r.diagnosis, HasSubstr("no backward gives this input a gradient (its .grad stays undefined"));
}

// A detached path with a path of zeros beside it: the input is reached, by the zeros.
TEST(WrongRules, DetachedInputBesideAZeroPathGetsZeros) {
  Tensor x = sample({2, 2}, 11);
  const GradcheckResult r = gradcheck([](In in) { return exp(in[0].detach()) + in[0] * 0.0; }, {x});
  expect_readable_failure(r, 0, {2, 2});
  EXPECT_THAT(r.diagnosis, HasSubstr("the backward reaches this input and gives it 0 for every output"));
}

// ---- mistakes no scale fits: what can still be said ---------------------------------

namespace {

// A @ B, both operands learned: dA = g B^T, dB = A^T g (right), or dA = g B
// (wrong: B where B^T was meant; square operands, so the shapes hide it).
template <bool kRight>
struct MatmulBoth : Function<MatmulBoth<kRight>> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0], b = ctx.saved_tensors()[1];
    return {matmul(g, kRight ? transpose(b, 0, 1) : b), matmul(transpose(a, 0, 1), g)};
  }
};

// exp whose backward multiplies by x instead of exp(x) (the derivative,
// written with the output, evaluated at the input).
struct ExpTimesInput : Function<ExpTimesInput> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return exp(x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g * ctx.saved_tensors()[0]}; }
};

// log whose backward divides by the output log(x) instead of x.
struct LogOverOutput : Function<LogOverOutput> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor y = log(x);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g / ctx.saved_tensors()[0]}; }
};

// x^2 computed in float32 on float64 input, with the right backward 2x: the
// forward's rounding (u32 ~ 6e-8) ruins the eps = 1e-6 differences.
struct SquareInFloat32 : Function<SquareInFloat32> {
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const Tensor x32 = to(x, DType::Float32);
    return to(x32 * x32, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) { return {g * ctx.saved_tensors()[0] * 2.0}; }
};

}  // namespace

TEST(WrongRules, MatmulOperandNotTransposed) {
  Tensor a = sample({3, 3}, 21), b = sample({3, 3}, 22);
  const GradcheckResult r = gradcheck([](In in) { return MatmulBoth<false>::apply(in[0], in[1]); }, {a, b});
  expect_readable_failure(r, 0, {3, 3});  // dB is right
  EXPECT_THAT(r.diagnosis, HasSubstr("an operand transposed"));
  EXPECT_THAT(r.diagnosis, HasSubstr("input 1's last two dims swapped"));
  EXPECT_THAT(r.diagnosis, ::testing::Not(HasSubstr("wrong sign")));
  // ...and the right rule passes.
  EXPECT_TRUE(gradcheck([](In in) { return MatmulBoth<true>::apply(in[0], in[1]); }, {a, b}).passed);
}

TEST(WrongRules, ExpGradientTakenAtTheInput) {
  Tensor x = sample({2, 3}, 23);
  const GradcheckResult r = gradcheck([](In in) { return ExpTimesInput::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {2, 3});
  EXPECT_THAT(r.diagnosis, HasSubstr("taken at the input where it needs the output"));
  EXPECT_EQ(x.to_vector<double>(), sample({2, 3}, 23).to_vector<double>());  // values put back
  EXPECT_FALSE(x.grad().defined());
}

TEST(WrongRules, LogGradientTakenAtTheOutput) {
  Generator gen(24);
  Tensor x = (rand({5}, kF64, &gen) + 2.0).detach().requires_grad_();  // log(x) in (0.69, 1.1): defined at y too
  const GradcheckResult r = gradcheck([](In in) { return LogOverOutput::apply(in[0]); }, {x});
  expect_readable_failure(r, 0, {5});
  EXPECT_THAT(r.diagnosis, HasSubstr("taken at the output where it needs the input"));
}

TEST(WrongRules, ForwardRoundedToFloat32IsNotAGradientMistake) {
  Tensor x = sample({6}, 25);
  const GradcheckResult r = gradcheck([](In in) { return SquareInFloat32::apply(in[0]); }, {x});
  EXPECT_FALSE(r.passed);
  EXPECT_THAT(r.diagnosis, HasSubstr("the forward is not smooth at the scale of eps"));
  EXPECT_THAT(r.diagnosis, HasSubstr("float32"));
}

TEST(RightRules, TheCorrectVersionsPass) {
  const std::vector<std::pair<std::string, Fn>> fns = {
      {"sin", [](In in) { return Sin<true>::apply(in[0]); }},
      {"square", [](In in) { return Square<2>::apply(in[0]); }},
      {"matmul_const", [](In in) { return MatmulConst<true>::apply(in[0], in[2]); }},
      {"add_row", [](In in) { return AddRow<BroadcastRule::Summed>::apply(in[1], in[3]); }},
  };
  Tensor x = sample({3, 3}, 12);
  Tensor a = sample({3, 4}, 13);
  Tensor b = tensor({1, 2, 0, -1, 0.5, 3, 2, -2, 1}, {3, 3}, kF64);
  Tensor row = sample({4}, 14);
  for (const auto& [name, fn] : fns) {
    // Inputs a function does not use get an all-zero numerical and analytical Jacobian.
    const GradcheckResult r = gradcheck(fn, {x, a, b, row});
    EXPECT_TRUE(r.passed) << name << ":\n" << r.report;
    EXPECT_LT(r.max_abs_error, 1e-6) << name;
    EXPECT_TRUE(r.worst.empty()) << name;
    EXPECT_THAT(r.report, HasSubstr("passed")) << name;
  }
}

TEST(RightRules, FunctionReturningItsInput) {
  // The output is the leaf itself: backward of a one-hot lands straight in its .grad.
  Tensor x = sample({2, 2}, 16);
  const GradcheckResult r = gradcheck([](In in) { return in[0]; }, {x});
  EXPECT_TRUE(r.passed) << r.report;
  EXPECT_FALSE(x.grad().defined());
}

TEST(RightRules, NonContiguousInput) {
  // gradcheck perturbs elements of a strided (transposed) leaf in place.
  Tensor base = sample({3, 2}, 15).detach();
  Tensor xt = transpose(base, 0, 1).requires_grad_();  // [2, 3], strides {1, 2}
  ASSERT_FALSE(xt.is_contiguous());
  const GradcheckResult r = gradcheck([](In in) { return Square<2>::apply(in[0]) * in[0]; }, {xt});
  EXPECT_TRUE(r.passed) << r.report;
  const GradcheckResult bad = gradcheck([](In in) { return Sin<false>::apply(in[0]); }, {xt});
  EXPECT_THAT(bad.diagnosis, HasSubstr("wrong sign"));
}
