// backward(): reverse-mode differentiation over the recorded graph.
#pragma once

#include "autograd/node.h"

namespace ropegrad {

// Computes d(root)/d(leaf) for every leaf that requires grad and adds it to
// leaf.grad (accumulating across calls, as PyTorch does; zero it with
// zero_grad). `grad` is d(loss)/d(root); it may be omitted only for a
// one-element root. Without retain_graph the saved tensors are freed, and a
// second backward through the same graph is an error.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool retain_graph = false);

// The nodes reachable from `root`, each once, ordered so every node comes
// before the nodes its gradient flows into (reverse topological order).
std::vector<std::shared_ptr<Node>> topological_order(const std::shared_ptr<Node>& root);

}  // namespace ropegrad
