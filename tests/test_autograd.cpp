// The rules of reverse-mode autograd, each pinned down with real values:
// leaves, accumulation, retain_graph, no_grad, detach, the version counter,
// gradients through views, shared subexpressions, retain_grad, graph export,
// mixed dtypes, custom Functions and the memory that backward frees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/dot.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointwise;

namespace {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// Element-wise comparison, tight enough for results computed in float64.
#define EXPECT_VALUES(t, ...) \
  EXPECT_THAT(values(t), Pointwise(DoubleNear(1e-12), std::vector<double>(__VA_ARGS__)))

}  // namespace

// ---- leaves, requires_grad, backward's arguments --------------------------------------

TEST(Leaves, LeafAndNonLeafAndPropagation) {
  Tensor x = param({1, 2, 3});
  Tensor c = tensor({4, 5, 6}, kF64);  // a constant
  EXPECT_TRUE(x.is_leaf());
  EXPECT_TRUE(x.requires_grad());
  EXPECT_FALSE(c.requires_grad());

  Tensor y = x * c;  // [3], recorded
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());
  ASSERT_NE(y.grad_fn(), nullptr);

  // An op on tensors that need no gradient records nothing: its result is a leaf.
  Tensor z = c * 2.0;
  EXPECT_TRUE(z.is_leaf());
  EXPECT_FALSE(z.requires_grad());
  EXPECT_EQ(z.grad_fn(), nullptr);

  // One input requiring grad is enough, whichever side it is on.
  EXPECT_TRUE((c + x).requires_grad());
  EXPECT_TRUE(exp(sum(c * x)).requires_grad());
}

TEST(Leaves, GradIsUndefinedBeforeBackward) {
  Tensor x = param({1, 2, 3});
  Tensor y = sum(x * x);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(y.grad().defined());
  backward(y);
  ASSERT_TRUE(x.grad().defined());
  EXPECT_VALUES(x.grad(), {2, 4, 6});  // d sum(x^2) = 2x
}

TEST(Leaves, RequiresGradOnlyForFloatingPoint) {
  Tensor ids = tensor_i64({1, 2});
  const std::string msg = error_of([&] { ids.requires_grad_(); });
  EXPECT_THAT(msg, HasSubstr("requires_grad_"));
  EXPECT_THAT(msg, HasSubstr("int64"));
}

TEST(Backward, FromScalar) {
  Tensor x = param({0.5, -1.0});
  Tensor w = param({3.0, 4.0});
  Tensor loss = sum(x * w);  // []
  EXPECT_EQ(loss.shape(), Shape{});
  backward(loss);
  EXPECT_VALUES(x.grad(), {3, 4});
  EXPECT_VALUES(w.grad(), {0.5, -1.0});
}

TEST(Backward, FromOneElementNonScalar) {
  // A [1, 1] output is one element: the implicit gradient is 1, as in torch.
  Tensor x = param({2.0}, {1, 1});
  Tensor y = x * x * x;
  backward(y);
  EXPECT_VALUES(x.grad(), {12});  // 3 x^2
}

TEST(Backward, ExplicitGradientOnNonScalar) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * x;  // [2, 3]
  Tensor g = tensor({1, 0.5, 2, 0, -1, 10}, {2, 3}, kF64);
  backward(y, g);
  // vector-Jacobian product: g * 2x
  EXPECT_VALUES(x.grad(), {2, 2, 12, 0, -10, 120});
}

TEST(Backward, NonScalarWithoutGradientIsAnError) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;  // [2, 3]
  const std::string msg = error_of([&] { backward(y); });
  EXPECT_THAT(msg, HasSubstr("backward"));
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));
  EXPECT_FALSE(x.grad().defined());
}

TEST(Backward, GradientOfTheWrongShapeIsAnError) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;  // [2, 3]
  const std::string msg = error_of([&] { backward(y, ones({3, 2}, kF64)); });
  EXPECT_THAT(msg, HasSubstr("backward"));
  EXPECT_THAT(msg, HasSubstr("[3, 2]"));
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));
}

TEST(Backward, OnATensorThatNeedsNoGradIsAnError) {
  Tensor c = tensor({1, 2}, kF64);
  const std::string msg = error_of([&] { backward(sum(c)); });
  EXPECT_THAT(msg, HasSubstr("backward"));
  EXPECT_THAT(msg, HasSubstr("does not require grad"));
}

// ---- accumulation and retain_graph -----------------------------------------------------

TEST(Accumulation, TwoBackwardsDoubleTheGrad) {
  Tensor x = param({1, -2, 3});
  Tensor loss = sum(x * x * x);  // d/dx = 3x^2 = {3, 12, 27}
  backward(loss, Tensor(), /*retain_graph=*/true);
  EXPECT_VALUES(x.grad(), {3, 12, 27});
  backward(loss, Tensor(), /*retain_graph=*/true);
  EXPECT_VALUES(x.grad(), {6, 24, 54});
}

TEST(Accumulation, AcrossSeparateGraphs) {
  Tensor x = param({1, 2});
  backward(sum(x * 3.0));
  backward(sum(x * x));
  EXPECT_VALUES(x.grad(), {3 + 2, 3 + 4});
}

TEST(Accumulation, SetGradUndefinedResets) {
  Tensor x = param({1, 2});
  Tensor loss = sum(x * x);
  backward(loss, Tensor(), true);
  x.set_grad(Tensor());
  EXPECT_FALSE(x.grad().defined());
  backward(loss, Tensor(), true);
  EXPECT_VALUES(x.grad(), {2, 4});
}

TEST(Accumulation, ZeroUnderNoGradResets) {
  Tensor x = param({1, 2});
  Tensor loss = sum(x * x);
  backward(loss, Tensor(), true);
  {
    NoGradGuard no_grad;
    Tensor g = x.grad();
    zero_(g);
  }
  EXPECT_VALUES(x.grad(), {0, 0});
  backward(loss, Tensor(), true);
  EXPECT_VALUES(x.grad(), {2, 4});  // added to zeros, not to the old {2, 4}
}

// The accumulated .grad must be the leaf's own buffer: accumulating a second
// gradient must not write into the tensor the caller passed to backward (torch
// leaves `g` untouched in all three cases).
TEST(Accumulation, GradDoesNotAliasTheCallersGradient) {
  const Tensor c = tensor({5, 5, 5}, kF64);
  {
    Tensor g = tensor({1, 1, 1}, kF64);
    Tensor x = param({1, 2, 3});
    backward(x, g);  // root is the leaf itself
    backward(x, g);
    EXPECT_VALUES(x.grad(), {2, 2, 2});
    EXPECT_VALUES(g, {1, 1, 1});
  }
  {
    Tensor g = tensor({1, 1, 1}, kF64);
    Tensor x = param({1, 2, 3});
    backward(clone(x), g);  // clone passes the gradient through
    backward(clone(x), g);
    EXPECT_VALUES(x.grad(), {2, 2, 2});
    EXPECT_VALUES(g, {1, 1, 1});
  }
  {
    Tensor g = tensor({1, 1, 1}, kF64);
    Tensor x = param({1, 2, 3});
    backward(x + c, g);  // add without broadcasting passes it through too
    backward(x + c, g);
    EXPECT_VALUES(x.grad(), {2, 2, 2});
    EXPECT_VALUES(g, {1, 1, 1});
  }
}

TEST(RetainGraph, SecondBackwardWithoutItIsAnError) {
  Tensor x = param({1, 2});
  Tensor loss = sum(exp(x));
  backward(loss);
  const std::string msg = error_of([&] { backward(loss); });
  EXPECT_THAT(msg, HasSubstr("backward"));
  EXPECT_THAT(msg, HasSubstr("second time"));
  EXPECT_THAT(msg, HasSubstr("retain_graph"));
  // The first backward's gradient is still there, unchanged.
  EXPECT_VALUES(x.grad(), {std::exp(1.0), std::exp(2.0)});
}

TEST(RetainGraph, ThreeBackwardsWithRetainThenOneWithout) {
  Tensor x = param({2.0});
  Tensor loss = sum(x * x);
  backward(loss, Tensor(), true);
  backward(loss, Tensor(), true);
  backward(loss);  // frees the graph
  EXPECT_VALUES(x.grad(), {12});
  EXPECT_THAT(error_of([&] { backward(loss); }), HasSubstr("second time"));
}

TEST(RetainGraph, ASecondRootThroughAFreedPartIsAnError) {
  // a and b share exp(x); the first backward frees exp's saved output.
  Tensor x = param({0.0, 1.0});
  Tensor y = exp(x);
  Tensor a = sum(y);
  Tensor b = sum(y * 2.0);
  backward(a);
  const std::string msg = error_of([&] { backward(b); });
  EXPECT_THAT(msg, HasSubstr("second time"));
  EXPECT_THAT(msg, HasSubstr("'exp'"));
}

// ---- grad mode -----------------------------------------------------------------------

TEST(NoGrad, OpsInsideRecordNothing) {
  Tensor x = param({1, 2});
  Tensor y;
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(grad_enabled());
    y = exp(x * 3.0);
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  EXPECT_TRUE(y.is_leaf());
  EXPECT_VALUES(y, {std::exp(3.0), std::exp(6.0)});
  // And after the guard, recording is back.
  EXPECT_TRUE((x * 3.0).requires_grad());
}

TEST(NoGrad, NestingRestoresState) {
  EXPECT_TRUE(grad_enabled());
  {
    NoGradGuard outer;
    EXPECT_FALSE(grad_enabled());
    {
      NoGradGuard inner;
      EXPECT_FALSE(grad_enabled());
    }
    EXPECT_FALSE(grad_enabled());  // inner restored "off", not "on"
  }
  EXPECT_TRUE(grad_enabled());

  set_grad_enabled(false);
  {
    NoGradGuard guard;
  }
  EXPECT_FALSE(grad_enabled());  // the guard restores what it found
  set_grad_enabled(true);
}

TEST(NoGrad, InPlaceOnParameterAllowedInside) {
  Tensor w = param({1, 2, 3});
  const uint64_t v0 = w.version();
  {
    NoGradGuard no_grad;
    add_(w, tensor({0.5, 0.5, 0.5}, kF64), -2.0);  // w -= 2 * 0.5
    mul_(w, 3.0);
  }
  EXPECT_VALUES(w, {0, 3, 6});
  EXPECT_EQ(w.version(), v0 + 2);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
}

TEST(NoGrad, InPlaceOnParameterRefusedOutside) {
  Tensor w = param({1, 2, 3});
  std::string msg = error_of([&] { add_(w, tensor({1, 1, 1}, kF64)); });
  EXPECT_THAT(msg, HasSubstr("add_"));
  EXPECT_THAT(msg, HasSubstr("[3]"));
  EXPECT_THAT(msg, HasSubstr("NoGradGuard"));
  msg = error_of([&] { mul_(w, 2.0); });
  EXPECT_THAT(msg, HasSubstr("mul_"));
  msg = error_of([&] { zero_(w); });
  EXPECT_THAT(msg, HasSubstr("zero_"));
  EXPECT_VALUES(w, {1, 2, 3});  // untouched
}

// ---- detach ------------------------------------------------------------------------

TEST(Detach, SharesStorageAndCutsTheGraph) {
  Tensor x = param({1, 2, 3});
  Tensor d = x.detach();
  EXPECT_TRUE(d.shares_storage_with(x));
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.grad_fn(), nullptr);

  // loss = sum(x * stop_gradient(x)): only the first factor carries a gradient,
  // so d loss / dx = x (not 2x).
  Tensor loss = sum(x * d);
  backward(loss);
  EXPECT_VALUES(x.grad(), {1, 2, 3});
}

TEST(Detach, OfAnIntermediateStopsTheGradient) {
  Tensor x = param({1, 2});
  Tensor h = x * 3.0;
  Tensor loss = sum(h.detach() * x + h);  // d/dx = h + 3 = 3x + 3
  backward(loss);
  EXPECT_VALUES(x.grad(), {6, 9});
}

TEST(Detach, WritesAreSeenByTheOriginalAndBumpItsVersion) {
  Tensor x = param({1, 2, 3});
  Tensor d = x.detach();
  const uint64_t v0 = x.version();
  mul_(d, 2.0);  // d does not require grad: allowed with grad mode on
  EXPECT_VALUES(x, {2, 4, 6});
  EXPECT_EQ(x.version(), v0 + 1);
}

// ---- the version counter -------------------------------------------------------------

TEST(VersionCounter, ModifiedSavedInputIsAnError) {
  Tensor x = param({1, 2, 3});
  Tensor c = tensor({4, 5, 6}, kF64);  // saved by mul: d(x*c)/dx = c
  Tensor loss = sum(x * c);
  {
    NoGradGuard no_grad;
    mul_(c, 2.0);
  }
  const std::string msg = error_of([&] { backward(loss); });
  EXPECT_THAT(msg, HasSubstr("backward"));
  EXPECT_THAT(msg, HasSubstr("'mul'"));
  EXPECT_THAT(msg, HasSubstr("version 1"));
  EXPECT_THAT(msg, HasSubstr("expected version 0"));
  EXPECT_THAT(msg, HasSubstr("in-place"));
  EXPECT_FALSE(x.grad().defined());  // no wrong gradient was written
}

TEST(VersionCounter, ModifiedSavedOutputIsAnError) {
  Tensor x = param({0.0, 1.0});
  Tensor y = sigmoid(x);  // saves its output: d sigmoid = y (1 - y)
  Tensor loss = sum(y);
  {
    NoGradGuard no_grad;
    add_(y, 1.0);
  }
  const std::string msg = error_of([&] { backward(loss); });
  EXPECT_THAT(msg, HasSubstr("'sigmoid'"));
  EXPECT_THAT(msg, HasSubstr("[2]"));
  EXPECT_THAT(msg, HasSubstr("version"));
}

TEST(VersionCounter, ModifyingAnUnsavedTensorIsFine) {
  // add saves nothing: changing its constant operand afterwards is harmless.
  Tensor x = param({1, 2, 3});
  Tensor c = tensor({4, 5, 6}, kF64);
  Tensor loss = sum(x + c);
  mul_(c, 2.0);
  backward(loss);
  EXPECT_VALUES(x.grad(), {1, 1, 1});

  // x * c with a constant c saves c only (dx needs c, nobody asked for dc),
  // so x itself may change.
  Tensor x2 = param({1, 2, 3});
  Tensor c2 = tensor({4, 5, 6}, kF64);
  Tensor loss2 = sum(x2 * c2);
  {
    NoGradGuard no_grad;
    mul_(x2, 10.0);
  }
  backward(loss2);
  EXPECT_VALUES(x2.grad(), {4, 5, 6});
}

TEST(VersionCounter, ModifyingThroughAViewIsSeen) {
  // A view shares the storage and so the version counter.
  Tensor x = param({0.5, 1.5});
  Tensor y = exp(x);  // saves y
  Tensor loss = sum(y);
  {
    NoGradGuard no_grad;
    Tensor first = narrow(y, 0, 0, 1);
    fill_(first, 0.0);
  }
  EXPECT_THAT(error_of([&] { backward(loss); }), HasSubstr("'exp'"));
}

// ---- gradients through views -----------------------------------------------------------

TEST(Views, Narrow) {
  Tensor x = param({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4});
  Tensor y = narrow(x, 1, 1, 2);  // [2, 2]: columns 1 and 2
  EXPECT_TRUE(y.shares_storage_with(x));
  backward(sum(y * tensor({1, 2, 3, 4}, {2, 2}, kF64)));
  EXPECT_EQ(x.grad().shape(), (Shape{2, 4}));
  EXPECT_VALUES(x.grad(), {0, 1, 2, 0, 0, 3, 4, 0});
}

TEST(Views, Transpose) {
  Tensor x = param({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor y = transpose(x, 0, 1);  // [3, 2]
  backward(sum(y * tensor({1, 2, 3, 4, 5, 6}, {3, 2}, kF64)));
  // x.grad[i][j] = w[j][i]
  EXPECT_EQ(x.grad().shape(), (Shape{2, 3}));
  EXPECT_VALUES(x.grad(), {1, 3, 5, 2, 4, 6});
}

TEST(Views, ExpandSumsTheGradientBack) {
  Tensor x = param({1, 2, 3}, {3, 1});
  Tensor y = expand(x, {2, 3, 4});  // [2, 3, 4], each x[i] read 8 times
  Tensor w = arange(0, 24, 1, kF64);
  w = reshape(w, {2, 3, 4});        // w[a, i, k] = 12a + 4i + k
  backward(sum(y * w));
  // x.grad[i] = sum_{a, k} (12a + 4i + k) = 48 + 32i + 12
  EXPECT_EQ(x.grad().shape(), (Shape{3, 1}));
  EXPECT_VALUES(x.grad(), {60, 92, 124});
}

TEST(Views, Select) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor row = select(x, 0, 1);   // [2] = {3, 4}
  Tensor col = select(x, 1, -1);  // [3] = {2, 4, 6}
  backward(sum(row * tensor({5, 7}, kF64)) + sum(col * tensor({1, 10, 100}, kF64)));
  EXPECT_VALUES(x.grad(), {0, 1, 5, 7 + 10, 0, 100});
}

TEST(Views, SliceWithStep) {
  Tensor x = param({0, 1, 2, 3, 4, 5});
  Tensor y = slice(x, 0, 1, 6, 2);  // [3] = x[1::2] = {1, 3, 5}
  EXPECT_VALUES(y, {1, 3, 5});
  backward(sum(y * tensor({1, 2, 3}, kF64)));
  EXPECT_VALUES(x.grad(), {0, 1, 0, 2, 0, 3});
}

TEST(Views, ReshapeOfATransposedTensorCopies) {
  Tensor x = param({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor t = transpose(x, 0, 1);  // [3, 2] = [[0, 3], [1, 4], [2, 5]], not contiguous
  // view() cannot express this layout (as torch), reshape() copies.
  const std::string msg = error_of([&] { view(t, {6}); });
  EXPECT_THAT(msg, HasSubstr("view"));
  EXPECT_THAT(msg, HasSubstr("[3, 2]"));
  Tensor r = reshape(t, {6});
  EXPECT_FALSE(r.shares_storage_with(x));
  EXPECT_VALUES(r, {0, 3, 1, 4, 2, 5});
  backward(sum(r * tensor({1, 2, 3, 4, 5, 6}, kF64)));
  // r[2j + i] = x[i][j], so x.grad[i][j] = w[2j + i]
  EXPECT_VALUES(x.grad(), {1, 3, 5, 2, 4, 6});
}

TEST(Views, ChainOfViews) {
  // permute -> narrow -> unsqueeze -> flatten, all views of one leaf.
  Tensor x = param({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {2, 3, 2});
  Tensor y = flatten(unsqueeze(narrow(permute(x, {2, 0, 1}), 0, 1, 1), 0));  // [6]: x[:, :, 1]
  EXPECT_VALUES(y, {1, 3, 5, 7, 9, 11});
  backward(sum(y * tensor({1, 2, 3, 4, 5, 6}, kF64)));
  EXPECT_VALUES(x.grad(), {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6});
}

// ---- graph shapes ----------------------------------------------------------------------

TEST(Graph, TensorUsedTwiceGradsAdd) {
  Tensor x = param({0.0, 1.0, -1.0});
  backward(sum(x * x + exp(x)));
  // 2x + e^x
  EXPECT_VALUES(x.grad(), {1.0, 2.0 + std::exp(1.0), -2.0 + std::exp(-1.0)});
}

TEST(Graph, SameTensorBothOperands) {
  Tensor x = param({3.0});
  backward(sum(x * x * x + x));  // 3x^2 + 1
  EXPECT_VALUES(x.grad(), {28});
}

TEST(Graph, Diamond) {
  //        x
  //        |
  //      h = 2x
  //     /      \.
  // u = sin(h)  v = h * h
  //     \      /
  //    out = u + v
  Tensor x = param({0.25, -0.5});
  Tensor h = x * 2.0;
  Tensor out = sum(sin(h) + h * h);
  backward(out);
  // d/dx = 2 cos(2x) + 8x
  EXPECT_VALUES(x.grad(), {2 * std::cos(0.5) + 2.0, 2 * std::cos(-1.0) - 4.0});
}

TEST(Graph, DoubleDiamondCountsEveryPath) {
  // y = x + x; z = y + y; w = z + z  => w = 8x: 8 paths of weight 1.
  Tensor x = param({1.0, 2.0});
  Tensor y = x + x;
  Tensor z = y + y;
  backward(sum(z + z));
  EXPECT_VALUES(x.grad(), {8, 8});
}

TEST(Graph, LongChainDoesNotOverflowTheStack) {
  // 10000 nodes deep: a recursive topological sort would overflow the stack.
  constexpr int kDepth = 10000;
  Tensor x = param({0.5, -0.5});
  Tensor y = x;
  for (int i = 0; i < kDepth; ++i) y = (i % 2 == 0) ? y * 1.0 : y + 1.0;
  EXPECT_VALUES(y, {0.5 + kDepth / 2, -0.5 + kDepth / 2});
  backward(sum(y));
  EXPECT_VALUES(x.grad(), {1, 1});
  EXPECT_EQ(topological_order(y.grad_fn()).size(), static_cast<size_t>(kDepth + 1));  // + leaf
}

TEST(Graph, TopologicalOrderVisitsEachNodeOnceRootFirst) {
  Tensor x = param({1.0});
  Tensor h = x * 2.0;
  Tensor out = h * h + h;  // mul(h,h), add: h's node reached three times
  const auto order = topological_order(out.grad_fn());
  ASSERT_EQ(order.size(), 4u);  // add, mul(h, h), mul(x, 2), AccumulateGrad(x): nothing twice
  EXPECT_EQ(order.front().get(), out.grad_fn().get());
  EXPECT_TRUE(order.back()->is_accumulate_grad());
}

TEST(Graph, RetainGradOnIntermediate) {
  Tensor x = param({1, 2});
  Tensor h = x * 2.0;
  Tensor k = h + 1.0;
  h.retain_grad();
  EXPECT_TRUE(h.retains_grad());
  backward(sum(h * h) + sum(k));
  ASSERT_TRUE(h.grad().defined());
  EXPECT_VALUES(h.grad(), {2 * 2 + 1, 2 * 4 + 1});  // 2h + 1
  EXPECT_VALUES(x.grad(), {10, 18});               // 2 * (2h + 1)
  EXPECT_FALSE(k.grad().defined());                // not asked for: none kept
}

TEST(Graph, IntermediatesHaveNoGradWithoutRetainGrad) {
  Tensor x = param({1, 2});
  Tensor h = exp(x);
  backward(sum(h));
  EXPECT_FALSE(h.retains_grad());
  EXPECT_FALSE(h.grad().defined());
  EXPECT_TRUE(x.grad().defined());
}

TEST(Graph, BackwardOnALeaf) {
  Tensor x = param({1, 2});
  backward(x, tensor({3, 4}, kF64));
  EXPECT_VALUES(x.grad(), {3, 4});
}

// ---- names and graph export ---------------------------------------------------------

TEST(Names, BackwardNames) {
  EXPECT_EQ(backward_name("mul"), "MulBackward0");
  EXPECT_EQ(backward_name("log_softmax"), "LogSoftmaxBackward0");
  EXPECT_EQ(backward_name("AccumulateGrad"), "AccumulateGrad");

  Tensor x = param({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(backward_name((x * x).grad_fn()->name), "MulBackward0");
  EXPECT_EQ(backward_name((x + 1.0).grad_fn()->name), "AddBackward0");
  EXPECT_EQ(backward_name(sum(x).grad_fn()->name), "SumBackward0");
  EXPECT_EQ(backward_name(exp(x).grad_fn()->name), "ExpBackward0");
  EXPECT_EQ(backward_name(matmul(x, x).grad_fn()->name), "MatmulBackward0");
  EXPECT_EQ(backward_name(transpose(x, 0, 1).grad_fn()->name), "TransposeBackward0");
}

TEST(Names, ToDotShowsNodesShapesEdgesAndLeaves) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = param({1, 2, 3}, {3});
  Tensor loss = sum(exp(x * w));
  const std::string dot = to_dot(loss);
  EXPECT_THAT(dot, HasSubstr("digraph"));
  EXPECT_THAT(dot, HasSubstr("MulBackward0"));
  EXPECT_THAT(dot, HasSubstr("ExpBackward0"));
  EXPECT_THAT(dot, HasSubstr("SumBackward0"));
  EXPECT_THAT(dot, HasSubstr("[2, 3]"));
  EXPECT_THAT(dot, HasSubstr("leaf [2, 3]"));
  EXPECT_THAT(dot, HasSubstr("leaf [3]"));
  EXPECT_THAT(dot, HasSubstr("->"));
  // 5 nodes (2 leaves + mul, exp, sum) and 4 edges.
  size_t edges = 0;
  for (size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 1)) ++edges;
  EXPECT_EQ(edges, 4u);
}

TEST(Names, ToDotOfALeaf) {
  Tensor x = param({1, 2});
  const std::string dot = to_dot(x);
  EXPECT_THAT(dot, HasSubstr("leaf [2]"));
  EXPECT_THAT(dot, Not(HasSubstr("->")));
  EXPECT_THAT(to_dot(x, {{"x", x}}), HasSubstr("label=\"x [2]\""));
}

// Leaves named by the caller are labelled with their names; the others stay "leaf".
TEST(Names, ToDotNamesTheLeavesItIsGiven) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = param({1, 2, 3}, {3});
  Tensor b = param({1, 2, 3}, {3});
  const std::string dot = to_dot(sum(x * w + b), {{"x", x}, {"w", w}});
  EXPECT_THAT(dot, HasSubstr("label=\"x [2, 3]\""));
  EXPECT_THAT(dot, HasSubstr("label=\"w [3]\""));
  EXPECT_THAT(dot, HasSubstr("label=\"leaf [3]\""));  // b, not named
  EXPECT_THAT(dot, Not(HasSubstr("leaf [2, 3]")));
}

// ---- dtypes --------------------------------------------------------------------------

TEST(Dtypes, MixedFloat32AndFloat64LeavesGetTheirOwnDtype) {
  Tensor a = tensor({1.5, 2.5}, DType::Float32).requires_grad_();
  Tensor b = tensor({3.0, -4.0}, kF64).requires_grad_();
  Tensor y = a * b;  // promoted to float64
  EXPECT_EQ(y.dtype(), kF64);
  backward(sum(y));
  ASSERT_TRUE(a.grad().defined());
  ASSERT_TRUE(b.grad().defined());
  EXPECT_EQ(a.grad().dtype(), DType::Float32);
  EXPECT_EQ(b.grad().dtype(), kF64);
  EXPECT_VALUES(a.grad(), {3.0, -4.0});
  EXPECT_VALUES(b.grad(), {1.5, 2.5});
}

TEST(Dtypes, CastBetweenFloatDtypesIsDifferentiable) {
  Tensor a = tensor({0.5, 2.0}, DType::Float32).requires_grad_();
  Tensor y = to(a, kF64) * to(a, kF64);
  backward(sum(y));
  EXPECT_EQ(a.grad().dtype(), DType::Float32);
  EXPECT_VALUES(a.grad(), {1.0, 4.0});
}

// ---- custom Function API ---------------------------------------------------------------

namespace {

struct Cube : Function<Cube> {
  static constexpr const char* name = "cube";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0];
    return {grad * 3.0 * x * x};
  }
};

// a * b with a record of which gradients backward was asked for.
// A backward that returns the gradient of its input's transpose (its last
// two dims swapped): the error says so.
struct ReturnsTransposedGradient : Function<ReturnsTransposedGradient> {
  static constexpr const char* name = "returns_transposed_gradient";
  static Tensor forward(FunctionCtx&, const Tensor& x) { return x * 2.0; }
  static Grads backward(FunctionCtx&, const Tensor& grad) { return {contiguous(transpose(grad, -1, -2))}; }
};

TEST(Backward, AGradientOfTheInputsTransposeIsNamed) {
  Tensor x = randn({2, 3, 4}, kF64).requires_grad_();
  const std::string msg = error_of([&] { backward(sum(ReturnsTransposedGradient::apply(x))); });
  EXPECT_THAT(msg, HasSubstr("returns_transposed_gradient"));
  EXPECT_THAT(msg, HasSubstr("[2, 4, 3]"));
  EXPECT_THAT(msg, HasSubstr("the input's shape with its last two dims swapped"));
}

struct RecordingMul : Function<RecordingMul> {
  static constexpr const char* name = "recording_mul";
  static inline std::vector<bool> asked;
  static inline bool forward_saw_grad_mode = true;
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    forward_saw_grad_mode = grad_enabled();
    ctx.save_for_backward({a, b});
    return a * b;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const auto saved = ctx.saved_tensors();
    asked = {ctx.needs_input_grad(0), ctx.needs_input_grad(1), ctx.needs_input_grad(2)};
    return {ctx.needs_input_grad(0) ? grad * saved[1] : Tensor(),
            ctx.needs_input_grad(1) ? grad * saved[0] : Tensor()};
  }
};

// scale * x, the scale kept in saved_data (non-tensor state for backward).
struct Scale : Function<Scale> {
  static constexpr const char* name = "scale";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, double scale) {
    ctx.saved_data["scale"] = scale;
    ctx.saved_data["shape"] = x.shape();
    return x * scale;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const double scale = std::any_cast<double>(ctx.saved_data.at("scale"));
    EXPECT_EQ(std::any_cast<Shape>(ctx.saved_data.at("shape")), grad.shape());
    return {grad * scale};
  }
};

// Returns its input unchanged (forward returns an input as is).
struct Identity : Function<Identity> {
  static Tensor forward(FunctionCtx&, const Tensor& x) { return x; }
  static Grads backward(FunctionCtx&, const Tensor& grad) { return {grad}; }
};

}  // namespace

TEST(CustomFunction, CubeGivesCorrectGradients) {
  Tensor x = param({1, -2, 0.5});
  Tensor y = Cube::apply(x);
  EXPECT_VALUES(y, {1, -8, 0.125});
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name, "cube");
  EXPECT_EQ(backward_name(y.grad_fn()->name), "CubeBackward0");
  backward(sum(y));
  EXPECT_VALUES(x.grad(), {3, 12, 0.75});  // 3x^2
}

TEST(CustomFunction, ComposesWithBuiltInOps) {
  Tensor x = param({1, 2});
  Tensor loss = sum(exp(Cube::apply(x * 0.5)));  // e^{x^3/8}, d = e^{x^3/8} * 3x^2/8
  backward(loss);
  EXPECT_THAT(values(x.grad()),
              Pointwise(DoubleNear(1e-12), std::vector<double>{std::exp(0.125) * 3.0 / 8.0,
                                                               std::exp(1.0) * 12.0 / 8.0}));
}

TEST(CustomFunction, NoGraphWhenNothingRequiresGrad) {
  Tensor c = tensor({2.0}, kF64);
  Tensor y = Cube::apply(c);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  EXPECT_VALUES(y, {8});
}

TEST(CustomFunction, NeedsInputGradAndForwardRunsWithoutGrad) {
  Tensor a = param({2, 3});
  Tensor b = tensor({5, 7}, kF64);  // a constant
  RecordingMul::asked.clear();
  Tensor y = RecordingMul::apply(a, b);
  EXPECT_FALSE(RecordingMul::forward_saw_grad_mode);
  EXPECT_TRUE(grad_enabled());
  backward(sum(y));
  EXPECT_EQ(RecordingMul::asked, (std::vector<bool>{true, false, false}));  // out of range: false
  EXPECT_VALUES(a.grad(), {5, 7});

  Tensor c = tensor({1, 1}, kF64);
  Tensor d = param({4, 6});
  backward(sum(RecordingMul::apply(c, d)));
  EXPECT_EQ(RecordingMul::asked, (std::vector<bool>{false, true, false}));
  EXPECT_VALUES(d.grad(), {1, 1});
}

TEST(CustomFunction, SavedData) {
  Tensor x = param({1, 2, 3});
  backward(sum(Scale::apply(x, 2.5)));
  EXPECT_VALUES(x.grad(), {2.5, 2.5, 2.5});
}

TEST(CustomFunction, ReturningTheInputDoesNotRewriteItsHistory) {
  Tensor x = param({1, 2});
  Tensor y = Identity::apply(x);
  EXPECT_TRUE(x.is_leaf());  // x keeps being a leaf
  EXPECT_FALSE(y.is_leaf());
  backward(sum(y * 3.0));
  EXPECT_VALUES(x.grad(), {3, 3});
}

TEST(CustomFunction, SavedTensorModifiedInPlaceMakesBackwardThrow) {
  Tensor x = param({1, 2});
  Tensor y = Cube::apply(x);
  {
    NoGradGuard no_grad;
    mul_(x, 2.0);
  }
  const std::string msg = error_of([&] { backward(sum(y)); });
  EXPECT_THAT(msg, HasSubstr("'cube'"));
  EXPECT_THAT(msg, HasSubstr("version"));
}

// ---- memory ------------------------------------------------------------------------

TEST(Memory, BackwardWithoutRetainGraphFreesSavedTensors) {
  // exp saves its output (4 MiB here), which nothing else holds: the graph
  // is the only owner, and backward must let go of it.
  constexpr int64_t kN = 1 << 19;  // float64: 4 MiB
  constexpr int64_t kBytes = kN * 8;
  Tensor x = zeros({kN}, kF64).requires_grad_();
  const int64_t before = memory_stats().current_bytes;
  Tensor loss = sum(exp(x));
  const int64_t after_forward = memory_stats().current_bytes;
  EXPECT_GE(after_forward - before, kBytes);  // exp(x) is alive inside the graph

  backward(loss);
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().numel(), kN);
  EXPECT_DOUBLE_EQ(x.grad().at({kN - 1}), 1.0);  // e^0
  x.set_grad(Tensor());
  const int64_t after_backward = memory_stats().current_bytes;
  EXPECT_LT(after_backward - before, kBytes / 4)
      << "the saved exp(x) is still alive after backward without retain_graph";
}

TEST(Memory, RetainGraphKeepsSavedTensors) {
  constexpr int64_t kN = 1 << 19;
  constexpr int64_t kBytes = kN * 8;
  Tensor x = zeros({kN}, kF64).requires_grad_();
  const int64_t before = memory_stats().current_bytes;
  Tensor loss = sum(exp(x));
  backward(loss, Tensor(), /*retain_graph=*/true);
  x.set_grad(Tensor());
  EXPECT_GE(memory_stats().current_bytes - before, kBytes);  // still needed for a second backward
  // Dropping the graph (the last handle on loss) frees it.
  loss = Tensor();
  EXPECT_LT(memory_stats().current_bytes - before, kBytes / 4);
}

// ---- gradient-ready hooks --------------------------------------------------------------

TEST(GradReadyHook, FiresOncePerBackwardWithTheLeafsFinalGradient) {
  Tensor x = param({1, 2});
  std::vector<std::vector<double>> seen;  // x.grad at each call
  GradReadyHookHandle h = register_grad_ready_hook(x, [&](const Tensor& leaf) { seen.push_back(values(leaf.grad())); });
  // x is used three times: the hook runs after the last contribution only.
  backward(sum(x * x + x * 3.0));  // d/dx = 2x + 3
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_THAT(seen[0], Pointwise(DoubleNear(1e-12), std::vector<double>{5, 7}));
  backward(sum(x * 2.0));  // a second backward: once more, the grad accumulated
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_THAT(seen[1], Pointwise(DoubleNear(1e-12), std::vector<double>{7, 9}));
}

TEST(GradReadyHook, AnEarlyFinishedLeafFiresBeforeTheLeavesBelowIt) {
  // A head w on top of a chain from e: w's gradient is complete after the
  // first node, e's only at the end. The edge to w comes first in mul's
  // inputs, so the topological order places w's accumulator last: its hook
  // must not wait for that place.
  Tensor e = param({1, 2, 3});
  Tensor w = param({0.5, -1, 2});
  std::vector<std::string> order;
  bool e_had_grad_when_w_fired = true;
  GradReadyHookHandle hw = register_grad_ready_hook(w, [&](const Tensor&) {
    order.push_back("w");
    e_had_grad_when_w_fired = e.grad().defined();
  });
  GradReadyHookHandle he = register_grad_ready_hook(e, [&](const Tensor&) { order.push_back("e"); });
  Tensor h = exp(e * 0.1) * 2.0;
  backward(sum(w * h));
  EXPECT_EQ(order, (std::vector<std::string>{"w", "e"}));
  EXPECT_FALSE(e_had_grad_when_w_fired);
  EXPECT_VALUES(w.grad(), {2 * std::exp(0.1), 2 * std::exp(0.2), 2 * std::exp(0.3)});
  EXPECT_VALUES(e.grad(), {0.5 * 0.2 * std::exp(0.1), -1 * 0.2 * std::exp(0.2), 2 * 0.2 * std::exp(0.3)});
}

TEST(GradReadyHook, WorksWithRetainGraphAndGivesTheSameGradients) {
  Tensor x = param({1, 2});
  Tensor y = param({3, 4});
  int calls = 0;
  GradReadyHookHandle h = register_grad_ready_hook(x, [&](const Tensor&) { ++calls; });
  Tensor loss = sum(x * y * x);
  backward(loss, Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(calls, 1);
  backward(loss, Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(calls, 2);
  EXPECT_VALUES(x.grad(), {2 * 2 * 1 * 3, 2 * 2 * 2 * 4});  // 2 x y, twice
  EXPECT_VALUES(y.grad(), {2 * 1, 2 * 4});                  // x^2, twice
}

TEST(GradReadyHook, NoHookNoBookkeepingAndARemovedHookIsGone) {
  Tensor x = param({1, 2});
  const int64_t before = backward_calls_with_hooks();
  backward(sum(x * x));
  EXPECT_EQ(backward_calls_with_hooks(), before);  // the plain path
  int calls = 0;
  {
    Tensor other = param({5});  // a hook on a leaf outside the graph changes nothing either
    GradReadyHookHandle h = register_grad_ready_hook(other, [&](const Tensor&) { ++calls; });
    backward(sum(x * x));
    EXPECT_EQ(backward_calls_with_hooks(), before);
    GradReadyHookHandle hx = register_grad_ready_hook(x, [&](const Tensor&) { ++calls; });
    backward(sum(x * x));
    EXPECT_EQ(backward_calls_with_hooks(), before + 1);
    EXPECT_EQ(calls, 1);
  }  // both handles removed their hooks
  backward(sum(x * x));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(backward_calls_with_hooks(), before + 1);
  EXPECT_VALUES(x.grad(), {8, 16});  // four backwards of 2x
}

TEST(GradReadyHook, ALeafRootFiresItsHook) {
  Tensor x = param({1});
  int calls = 0;
  GradReadyHookHandle h = register_grad_ready_hook(x, [&](const Tensor&) { ++calls; });
  backward(x);
  EXPECT_EQ(calls, 1);
}

TEST(GradReadyHook, OnlyOnALeafThatRequiresGrad) {
  Tensor x = param({1, 2});
  EXPECT_RG_ERROR(register_grad_ready_hook(x * 2.0, [](const Tensor&) {}), "register_grad_ready_hook",
                  "leaf that requires grad", "has a grad_fn");
  EXPECT_RG_ERROR(register_grad_ready_hook(tensor({1.0}, kF64), [](const Tensor&) {}), "register_grad_ready_hook",
                  "does not require grad");
  EXPECT_RG_ERROR(register_grad_ready_hook(x, GradReadyHook()), "register_grad_ready_hook", "empty");
}

namespace ropegrad {
namespace {

// A rule that calls a kernel with the wrong shape: the error names the op
// whose backward raised it, not only the kernel (sum_to here).
struct SumsToTheWrongShape : Function<SumsToTheWrongShape> {
  static constexpr const char* name = "wrong_sum";
  static Tensor forward(FunctionCtx&, const Tensor& x) { return x * 2.0; }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {kernels::sum_to(g, {5})}; }
};

TEST(Backward, AnErrorInsideARuleNamesTheOpWhoseRuleRaisedIt) {
  Tensor x = ones({2, 3}, DType::Float64).requires_grad_();
  const Tensor y = SumsToTheWrongShape::apply(x);
  EXPECT_RG_ERROR(backward(y, ones({2, 3}, DType::Float64)), "in the backward of 'wrong_sum'",
                  "(output gradient of shape [2, 3]; input of shape [2, 3])", "sum_to");
}

// A product with the wrong operand: the shapes the kernel quotes are named by
// what has them among the rule's tensors (A^T where B^T belongs).
struct MultipliesByTheWrongOperand : Function<MultipliesByTheWrongOperand> {
  static constexpr const char* name = "wrong_product";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0];
    return {matmul(g, transpose(a, -2, -1)), Tensor()};  // G A^T: B^T belongs there
  }
};

// A batched product whose backward reshapes a (2, 3, 4) input to (3, 8)
// where its flattening (6, 4) belongs, and multiplies it by the flattened
// output gradient (6, 5): the quoted shapes are named by what they are made of.
struct ReshapesTheWrongWay : Function<ReshapesTheWrongWay> {
  static constexpr const char* name = "wrong_reshape";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0];
    return {Tensor(), matmul(reshape(a, {3, 8}), reshape(g, {6, 5}))};
  }
};

TEST(Backward, AQuotedShapeIsNamedAsAFlatteningOrAsAnotherShapeOfTheSameElements) {
  const Tensor a = ones({2, 3, 4}, DType::Float64);
  Tensor b = ones({4, 5}, DType::Float64).requires_grad_();
  const Tensor y = ReshapesTheWrongWay::apply(a, b);
  EXPECT_RG_ERROR(backward(y, ones({2, 3, 5}, DType::Float64)), "in the backward of 'wrong_reshape'",
                  "[3, 8] has the 24 elements of input 0 [2, 3, 4], in another shape",
                  "[6, 5] is the output gradient's with its leading dims flattened");
}

// A batched product whose backward transposes b's dims 0 and 1 where its
// last two belong: b (2, 4, 5) becomes (4, 2, 5), which the error names.
struct TransposesTheWrongDims : Function<TransposesTheWrongDims> {
  static constexpr const char* name = "wrong_dims";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({b});
    return matmul(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor b = ctx.saved_tensors()[0];
    return {matmul(g, transpose(b, 0, 1)), Tensor()};  // B^T is transpose(b, -1, -2)
  }
};

TEST(Backward, AQuotedShapeIsNamedAsAnInputWithTwoDimsInTheOtherOrder) {
  Tensor a = ones({2, 3, 4}, DType::Float64).requires_grad_();
  const Tensor b = ones({2, 4, 5}, DType::Float64);
  const Tensor y = TransposesTheWrongDims::apply(a, b);
  EXPECT_RG_ERROR(backward(y, ones({2, 3, 5}, DType::Float64)), "in the backward of 'wrong_dims'",
                  "[4, 2, 5] is input 1's with dims 0 and 1 in the other order");
}

// x * y with x float32 and y float64 (the output float64): its backward
// multiplies g by the saved x as it is, a float32 tensor among float64 ones.
struct UsesASavedInputUnconverted : Function<UsesASavedInputUnconverted> {
  static constexpr const char* name = "unconverted";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& y) {
    ctx.save_for_backward({x});
    return x * y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {Tensor(), kernels::map_float(g, x, [](auto gg, auto xx) { return gg * xx; })};
  }
};

TEST(Backward, AKernelsDtypeErrorSaysEachTensorsDtype) {
  const Tensor x = ones({3}, DType::Float32);
  Tensor y = ones({3}, DType::Float64).requires_grad_();
  const Tensor out = UsesASavedInputUnconverted::apply(x, y);
  EXPECT_RG_ERROR(backward(out, ones({3}, DType::Float64)), "in the backward of 'unconverted'",
                  "dtypes differ: float64 vs float32",
                  "(the output gradient is float64; input 0 is float32; input 1 is float64)");
}

TEST(Backward, TheShapesAKernelQuotesAreNamedByWhatHasThem) {
  Tensor a = ones({3, 4}, DType::Float64).requires_grad_();
  const Tensor b = ones({4, 5}, DType::Float64);
  const Tensor y = MultipliesByTheWrongOperand::apply(a, b);
  EXPECT_RG_ERROR(backward(y, ones({3, 5}, DType::Float64)), "in the backward of 'wrong_product'",
                  "matmul: shapes [3, 5] and [4, 3] cannot be multiplied",
                  "(of the shapes quoted: [3, 5] is the output gradient's; [4, 3] is input 0's transposed (its last "
                  "two dims in the other order))");
}

}  // namespace
}  // namespace ropegrad
