// backward(): reverse-mode differentiation over the recorded graph.
#pragma once

#include <cstdint>
#include <functional>

#include "autograd/node.h"

namespace ropegrad {

// Computes d(root)/d(leaf) for every leaf that requires grad and adds it to
// leaf.grad (accumulating across calls, as PyTorch does; zero it with
// zero_grad). `grad` is d(loss)/d(root); it may be omitted only for a
// one-element root. Without retain_graph the saved tensors are freed, and a
// second backward through the same graph is an error.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool retain_graph = false);

// ---- gradient-ready hooks ------------------------------------------------------------
//
// A hook on a leaf runs inside backward() as soon as the leaf's gradient for
// this backward is complete (its last incoming contribution has been added
// to .grad), not at the end: data-parallel training (dist/mpi/data_parallel.h)
// starts sending the output head's gradient while the backward still works
// on the blocks below. It runs once per backward that reaches the leaf, with
// grad mode off, given the leaf (its .grad is final). With no hook
// registered anywhere, backward() runs exactly as it would without this
// feature (one atomic load per call).
using GradReadyHook = std::function<void(const Tensor& leaf)>;

// Removes its hook when destroyed (or on remove()); movable, not copyable.
class GradReadyHookHandle {
 public:
  GradReadyHookHandle() = default;
  explicit GradReadyHookHandle(uint64_t id) : id_(id) {}
  GradReadyHookHandle(GradReadyHookHandle&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  GradReadyHookHandle& operator=(GradReadyHookHandle&& o) noexcept;
  GradReadyHookHandle(const GradReadyHookHandle&) = delete;
  GradReadyHookHandle& operator=(const GradReadyHookHandle&) = delete;
  ~GradReadyHookHandle() { remove(); }
  void remove();

 private:
  uint64_t id_ = 0;
};

// Registers `hook` on `leaf` (a leaf that requires grad: an Error otherwise).
// Hooks of one leaf run in the order they were registered.
[[nodiscard]] GradReadyHookHandle register_grad_ready_hook(const Tensor& leaf, GradReadyHook hook);

// How many backward() calls took the hooks' path (the graph held a leaf with
// a hook); the tests check that a backward without hooks never does.
int64_t backward_calls_with_hooks();

// The nodes reachable from `root`, each once, ordered so every node comes
// before the nodes its gradient flows into (reverse topological order).
std::vector<std::shared_ptr<Node>> topological_order(const std::shared_ptr<Node>& root);

}  // namespace ropegrad
