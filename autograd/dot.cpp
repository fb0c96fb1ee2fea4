#include "autograd/dot.h"

#include <unordered_map>

#include "autograd/engine.h"

namespace ropegrad {

std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names) {
  // A leaf's label: its name when given one, else "leaf".
  const auto leaf_name = [&](const TensorImpl* leaf) -> std::string {
    for (const auto& [name, t] : names)
      if (t.defined() && t.impl_ptr().get() == leaf) return name;
    return "leaf";
  };
  std::string out = "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  if (!root.grad_fn()) {
    out += fmt::format("  n0 [shape=ellipse, label=\"{}\"];\n}}\n",
                       root.requires_grad() ? leaf_name(root.impl_ptr().get()) + " " + shape_str(root.shape())
                                            : "tensor " + shape_str(root.shape()));
    return out;
  }
  const auto order = topological_order(root.grad_fn());
  std::unordered_map<const Node*, size_t> id;
  for (size_t i = 0; i < order.size(); ++i) id[order[i].get()] = i;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& node = *order[i];
    if (node.is_accumulate_grad()) {
      out += fmt::format("  n{} [shape=ellipse, style=filled, fillcolor=lightblue, label=\"{} {}\"];\n", i,
                         leaf_name(node.leaf.get()), shape_str(node.output_shape));
    } else {
      out += fmt::format("  n{} [shape=box, label=\"{}\\n{}\"];\n", i, backward_name(node.name),
                         shape_str(node.output_shape));
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& next : order[i]->next) {
      if (next) out += fmt::format("  n{} -> n{};\n", id[next.get()], i);
    }
  }
  return out + "}\n";
}

}  // namespace ropegrad
