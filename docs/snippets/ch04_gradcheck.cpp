// The outputs chapter 4 (docs/04-gradcheck.md) shows; the docs test compares
// them with the chapter. Usage: snippet_ch04_gradcheck MODE:
//   eps         central-difference error of exp at 1, float64 vs float32
//   float32     gradcheck refuses a float32 input
//   wrong-sign  the report for chapter 2's Cube with a dropped minus
//   not-summed  the report for a broadcast gradient not summed back
//   kinks       numerical vs analytical slopes at relu's, clamp's, abs's and max's kinks
//   coupling    the report for softmax's backward without its coupling term
//   structure   the diagnosis (or what was observed) for seven more wrong rules
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/engine.h"
#include "autograd/function.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/random.h"

using namespace ropegrad;

namespace {

// Chapter 2's Cube with one character changed: d(x^3) = -3x^2.
struct CubeWrongSign : Function<CubeWrongSign> {
  static constexpr const char* name = "cube_wrong_sign";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0];
    return {grad * -3 * x * x};
  }
};

// x + b with b broadcast over the rows, whose backward forgets to sum b's
// gradient back to b's shape.
struct AddBiasNotSummed : Function<AddBiasNotSummed> {
  static constexpr const char* name = "add_bias_not_summed";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& b) { return x + b; }
  static Grads backward(FunctionCtx&, const Tensor& grad) { return {grad, grad}; }  // should be sum_to(grad, b's shape)
};

// softmax over the last dim whose backward keeps only the diagonal of the
// Jacobian, g y (1 - y), and drops the coupling -y_i y_j of a row.
struct SoftmaxDiagonalOnly : Function<SoftmaxDiagonalOnly> {
  static constexpr const char* name = "softmax_diagonal_only";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor y = ctx.saved_tensors()[0];
    return {grad * y * (1.0 - y)};  // should be y * (grad - sum(grad * y, -1))
  }
};

// y = a * sigmoid(b), whose backward returns {db, da}: the two gradients swapped.
struct GatedSwapped : Function<GatedSwapped> {
  static constexpr const char* name = "gated_swapped";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return a * sigmoid(b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor a = ctx.saved_tensors()[0], s = sigmoid(ctx.saved_tensors()[1]);
    return {grad * a * s * (1.0 - s), grad * s};
  }
};

// Layer norm (no gain) whose backward forgets that the mean depends on x: no - mean(g) term.
struct LayerNormNoMeanTerm : Function<LayerNormNoMeanTerm> {
  static constexpr const char* name = "layer_norm_no_mean_term";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor xc = x - mean(x, {-1}, true);
    const Tensor rstd = rsqrt(mean(xc * xc, {-1}, true) + 1e-5);
    ctx.save_for_backward({xc * rstd, rstd});
    return xc * rstd;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor xhat = ctx.saved_tensors()[0], rstd = ctx.saved_tensors()[1];
    return {rstd * (grad - xhat * mean(grad * xhat, {-1}, true))};
  }
};

// The product of each row, whose backward divides the product by x_j: 0/0 at an exact zero.
struct RowProduct : Function<RowProduct> {
  static constexpr const char* name = "row_product";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = select(x, -1, 0);
    for (int64_t j = 1; j < x.size(-1); ++j) y = y * select(x, -1, j);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0], y = ctx.saved_tensors()[1];
    return {unsqueeze(grad * y, -1) / x};
  }
};

// x + b with b broadcast over the rows, whose bias gradient takes the first row of g only.
struct AddBiasFirstRow : Function<AddBiasFirstRow> {
  static constexpr const char* name = "add_bias_first_row";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& b) { return x + b; }
  static Grads backward(FunctionCtx&, const Tensor& grad) { return {grad, select(grad, 0, 0)}; }
};

// x^3 with the power rule not lowered: 3 x^3 for 3 x^2.
struct CubeNotLowered : Function<CubeNotLowered> {
  static constexpr const char* name = "cube_not_lowered";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor x = ctx.saved_tensors()[0];
    return {grad * 3.0 * x * x * x};
  }
};

// softmax whose coupling sum is weighted by y^2 instead of y: the coupling term scaled.
struct SoftmaxWeightsSquared : Function<SoftmaxWeightsSquared> {
  static constexpr const char* name = "softmax_weights_squared";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor y = ctx.saved_tensors()[0];
    return {y * (grad - sum(grad * y * y, {-1}, true))};
  }
};

// softmax of scores with a fixed mask (-inf where it is true), whose backward
// recomputes the softmax without the mask: no simple form.
struct MaskedSoftmaxNoMask : Function<MaskedSoftmaxNoMask> {
  static constexpr const char* name = "masked_softmax_no_mask";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const Tensor mask = tensor(std::vector<double>{0, 1, 0, 0, 0, 1}, Shape{2, 3}, DType::Bool);
    return softmax(masked_fill(x, mask, -std::numeric_limits<double>::infinity()), -1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const Tensor p = softmax(ctx.saved_tensors()[0], -1);
    return {p * (grad - sum(grad * p, {-1}, true))};
  }
};

// The report's "diagnosis:" and "observed:" lines, without their indentation.
std::string verdict(const GradcheckResult& r) {
  std::string lines;
  size_t start = 0;
  while (start < r.report.size()) {
    const size_t end = std::min(r.report.find('\n', start), r.report.size());
    const std::string line = r.report.substr(start, end - start);
    if (line.rfind("  diagnosis: ", 0) == 0 || line.rfind("  observed: ", 0) == 0) lines += line.substr(2) + "\n";
    start = end + 1;
  }
  return lines;
}

// Seven wrong rules of different structure, each with its diagnosis line.
void print_structures() {
  Generator gen(0);
  const auto draw = [&gen](Shape shape) { return randn(shape, DType::Float64, &gen).requires_grad_(); };
  using In = const std::vector<Tensor>&;
  const Tensor with_zero = tensor({0.7, -1.3, 0.45, -0.6, 0.0, 1.15}, {2, 3}, DType::Float64).requires_grad_();
  const std::vector<std::tuple<std::string, GradcheckFn, std::vector<Tensor>>> cases = {
      {"a * sigmoid(b), {db, da} returned", [](In in) { return GatedSwapped::apply(in[0], in[1]); },
       {draw({2, 3}), draw({2, 3})}},
      {"layer norm without - mean(g)", [](In in) { return LayerNormNoMeanTerm::apply(in[0]); }, {draw({2, 4})}},
      {"row product as y / x_j", [](In in) { return RowProduct::apply(in[0]); }, {with_zero}},
      {"bias gradient g[0, :]", [](In in) { return AddBiasFirstRow::apply(in[0], in[1]); }, {draw({3, 4}), draw({4})}},
      {"x^3 as 3 x^3", [](In in) { return CubeNotLowered::apply(in[0]); }, {draw({2, 3})}},
      {"softmax, coupling weighted by y^2", [](In in) { return SoftmaxWeightsSquared::apply(in[0]); }, {draw({2, 3})}},
      {"masked softmax, backward without the mask", [](In in) { return MaskedSoftmaxNoMask::apply(in[0]); },
       {draw({2, 3})}},
  };
  for (const auto& [label, f, inputs] : cases) std::cout << label << ":\n" << verdict(gradcheck(f, inputs));
}

// The central difference of (f(x + eps) - f(x - eps)) / (2 eps) for f = exp at 1, in `dtype`.
double exp_slope_error(double eps, DType dtype) {
  const Tensor x = tensor({1.0}, dtype);
  const Tensor slope = (exp(x + eps) - exp(x - eps)) / (2 * eps);
  return std::abs(slope.item<double>() - std::numbers::e);
}

// d sum(f(x)) / dx: numerically (central differences, eps = 1e-6, float64)
// and by backward.
void slopes(const std::string& label, const std::function<Tensor(const Tensor&)>& f, const std::vector<double>& x,
            const std::string& note) {
  const double eps = 1e-6;
  std::vector<std::string> numerical, analytical;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> plus = x, minus = x;
    plus[i] += eps;
    minus[i] -= eps;
    const double up = sum(f(tensor(plus, {static_cast<int64_t>(x.size())}, DType::Float64))).item<double>();
    const double down = sum(f(tensor(minus, {static_cast<int64_t>(x.size())}, DType::Float64))).item<double>();
    numerical.push_back(fmt::format("{:.3g}", (up - down) / (2 * eps)));
  }
  const Tensor xt = tensor(x, {static_cast<int64_t>(x.size())}, DType::Float64).requires_grad_();
  backward(sum(f(xt)));
  const Tensor g = xt.grad();
  for (int64_t i = 0; i < g.numel(); ++i) analytical.push_back(fmt::format("{:.3g}", g.at<double>({i})));
  const auto list = [](const std::vector<std::string>& v) {
    return v.size() == 1 ? v[0] : fmt::format("[{}]", fmt::join(v, ", "));
  };
  std::cout << fmt::format("{:<26}numerical {}, analytical {}   {}\n", label, list(numerical), list(analytical), note);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "eps") {
    for (double eps : {1e-2, 1e-4, 1e-6, 1e-8, 1e-10}) {
      std::cout << fmt::format("eps {:8.0e}: float64 error {:9.2e}   float32 error {:9.2e}\n", eps,
                               exp_slope_error(eps, DType::Float64), exp_slope_error(eps, DType::Float32));
    }
  } else if (what == "float32") {
    try {
      (void)gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {randn({3}).requires_grad_()});
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  } else if (what == "wrong-sign") {
    Generator gen(0);
    const GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return CubeWrongSign::apply(in[0]); },
                                        {randn({2, 3}, DType::Float64, &gen).requires_grad_()});
    std::cout << r.report;
  } else if (what == "not-summed") {
    Generator gen(0);
    const GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& in) { return AddBiasNotSummed::apply(in[0], in[1]); },
        {randn({3, 4}, DType::Float64, &gen).requires_grad_(), randn({4}, DType::Float64, &gen).requires_grad_()});
    std::cout << r.report << "\n";
  } else if (what == "kinks") {
    slopes("relu at x = 0:", [](const Tensor& x) { return relu(x); }, {0.0}, "(torch's convention: 0)");
    slopes("clamp(x, 0, 1) at 0, 1:", [](const Tensor& x) { return clamp(x, 0.0, 1.0); }, {0.0, 1.0},
           "(gradient passes at the bounds)");
    slopes("abs at x = 1e-7:", [](const Tensor& x) { return abs(x); }, {1e-7}, "(the kink is within eps)");
    slopes("max(x, dim) of [1, 3, 3]:", [](const Tensor& x) { return max(x, 0).first; }, {1.0, 3.0, 3.0},
           "(index-based)");
  } else if (what == "coupling") {
    Generator gen(0);
    const GradcheckResult r = gradcheck(
        [](const std::vector<Tensor>& in) { return SoftmaxDiagonalOnly::apply(in[0]); },
        {randn({2, 4}, DType::Float64, &gen).requires_grad_()});
    std::cout << r.report;
  } else if (what == "structure") {
    print_structures();
  } else {
    std::cerr << "usage: snippet_ch04_gradcheck eps | float32 | wrong-sign | not-summed | kinks | coupling | "
                 "structure\n";
    return 2;
  }
  return 0;
}
