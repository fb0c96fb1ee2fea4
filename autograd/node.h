// The autograd graph: one Node per differentiable op that ran with grad on.
//
// A Node remembers, for each input of its op, where that input's gradient
// must go next (`next`: the input's own grad_fn, or the AccumulateGrad node
// of a leaf, or null when the input needs no gradient), and a backward rule
// that maps the gradient of the op's output to the gradients of its inputs.
// backward() (engine.cpp) walks these nodes once each in reverse topological
// order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ropegrad {

// Which inputs of an op want a gradient (next[i] != null), so a backward
// rule can skip work nobody asked for.
using NeedsGrad = std::vector<bool>;
// One gradient per input of the op; an undefined Tensor means "none".
using Grads = std::vector<Tensor>;
using BackwardFn = std::function<Grads(const Tensor& grad_output, const NeedsGrad& needs)>;

struct Node {
  std::string name;                         // the op: "mul", "matmul", ...
  std::vector<std::shared_ptr<Node>> next;  // per input; null = no gradient needed
  std::vector<Shape> input_shapes;          // what each returned gradient must match
  std::vector<DType> input_dtypes;
  Shape output_shape;
  BackwardFn backward;  // empty once released (after a backward without retain_graph)
  bool released = false;
  // Set for a leaf's AccumulateGrad node: the tensor whose .grad receives the sum.
  std::shared_ptr<TensorImpl> leaf;
  // The op's output; if it asked retain_grad(), backward fills its .grad too.
  std::weak_ptr<TensorImpl> output;

  bool is_accumulate_grad() const { return leaf != nullptr; }
  // Drops the saved tensors (they live in the backward closure).
  void release() {
    backward = nullptr;
    released = true;
  }
};

// ---- grad mode -------------------------------------------------------------------

bool grad_enabled();
void set_grad_enabled(bool enabled);

// RAII scope with gradient recording off (torch.no_grad / torch::NoGradGuard).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// ---- saved tensors ---------------------------------------------------------------

// A tensor a backward rule needs, with the version it had when saved: if an
// in-place op changes it before backward runs, unpack() throws instead of
// silently computing a wrong gradient (PyTorch's version-counter check).
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, std::string op);
  Tensor unpack() const;
  bool defined() const { return tensor_.defined(); }

 private:
  Tensor tensor_;  // detached alias: shares storage, never the graph (no cycles)
  uint64_t version_ = 0;
  std::string op_;
};

// ---- recording ops -----------------------------------------------------------------

// True when grad mode is on and any input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Makes `output` the result of op `name` applied to `inputs`, with the given
// backward rule. Call only when needs_grad(inputs).
void attach_node(const Tensor& output, std::string name, const std::vector<Tensor>& inputs,
                 BackwardFn backward);

// The node a gradient for `t` flows into: its grad_fn, its leaf accumulator,
// or null when t does not require grad.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

// "mul" -> "MulBackward0", the name torch prints in grad_fn=<...>.
std::string backward_name(const std::string& op);

}  // namespace ropegrad
