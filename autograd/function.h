// Custom differentiable functions: add an op without touching the engine.
//
//   struct Cube : ropegrad::Function<Cube> {
//     static constexpr const char* name = "cube";
//     static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
//       ctx.save_for_backward({x});
//       return x * x * x;                      // runs with grad mode off
//     }
//     static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
//       const Tensor x = ctx.saved_tensors()[0];
//       return {grad * 3 * x * x};             // one gradient per Tensor argument
//     }
//   };
//   Tensor y = Cube::apply(x);
//
// forward() receives the Tensor arguments (and any others) of apply();
// backward() returns one gradient per Tensor argument, in order (an
// undefined Tensor for "no gradient"). Saved tensors are checked against
// in-place changes like built-in ones.
#pragma once

#include <any>
#include <map>
#include <string>
#include <type_traits>

#include "autograd/node.h"

namespace ropegrad {

class FunctionCtx {
 public:
  void save_for_backward(const std::vector<Tensor>& tensors);
  std::vector<Tensor> saved_tensors() const;
  // Does Tensor argument i want a gradient? (Set before backward runs.)
  bool needs_input_grad(size_t i) const { return i < needs_.size() && needs_[i]; }
  // Anything else backward needs (sizes, flags, scalars).
  std::map<std::string, std::any> saved_data;

 private:
  template <typename> friend struct Function;
  std::string name_;
  std::vector<SavedTensor> saved_;
  NeedsGrad needs_;
};

template <typename Derived>
struct Function {
  template <typename... Args>
  static Tensor apply(Args&&... args) {
    auto ctx = std::make_shared<FunctionCtx>();
    if constexpr (requires { Derived::name; }) {
      ctx->name_ = Derived::name;
    } else {
      ctx->name_ = "custom_function";
    }
    std::vector<Tensor> inputs;
    (collect(inputs, args), ...);
    Tensor out;
    {
      NoGradGuard no_grad;  // forward computes values only; the node below is the graph
      out = Derived::forward(*ctx, std::forward<Args>(args)...);
    }
    RG_CHECK(out.defined(), ctx->name_, "forward returned an undefined tensor");
    if (needs_grad(inputs)) {
      // forward may return one of its inputs or a view of one; give the node
      // its own output tensor so the input's history is not overwritten.
      out = out.detach();
      attach_node(out, ctx->name_, inputs, [ctx](const Tensor& g, const NeedsGrad& needs) -> Grads {
        ctx->needs_ = needs;
        return Derived::backward(*ctx, g);
      });
    }
    return out;
  }

 private:
  template <typename A>
  static void collect(std::vector<Tensor>& inputs, const A& arg) {
    if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) inputs.push_back(arg);
  }
};

}  // namespace ropegrad
