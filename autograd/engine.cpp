#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "tensor/exercise.h"
#include "tensor/kernels.h"

namespace ropegrad {

std::vector<std::shared_ptr<Node>> topological_order(const std::shared_ptr<Node>& root) {
  // Iterative depth-first search; a node is emitted after everything it
  // feeds into, then the list is reversed (deep graphs must not overflow the stack).
  std::vector<std::shared_ptr<Node>> post_order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;  // node, next edge to explore
  std::unordered_map<Node*, std::shared_ptr<Node>> owner;
  visited.insert(root.get());
  owner[root.get()] = root;
  stack.emplace_back(root.get(), 0);
  while (!stack.empty()) {
    auto& [node, edge] = stack.back();
    if (edge < node->next.size()) {
      const std::shared_ptr<Node>& child = node->next[edge++];
      if (child && visited.insert(child.get()).second) {
        owner[child.get()] = child;
        stack.emplace_back(child.get(), 0);
      }
      continue;
    }
    post_order.push_back(owner[node]);
    stack.pop_back();
  }
  std::reverse(post_order.begin(), post_order.end());
  return post_order;
}

namespace {

// Explains a gradient of the wrong shape: the mistakes learners make most.
std::string shape_hint(const Shape& got, const Shape& want) {
  Shape reversed(got.rbegin(), got.rend());
  if (got.size() == 2 && reversed == want) {
    return " (it looks transposed)";
  }
  if (got.size() > 2 && got.size() == want.size()) {  // the last two dims swapped: the gradient of a transpose
    Shape swapped = want;
    std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
    if (swapped == got && swapped != want)
      return " (the input's shape with its last two dims swapped: the gradient of its transpose, not of the input)";
  }
  if (numel_of(got) == numel_of(want)) {
    return fmt::format(" (as many elements as the input, {}, in another shape)", numel_of(want));
  }
  try {
    if (broadcast_shapes(want, got, "") == got) {
      return " (the input was broadcast: sum the gradient back to the input's shape with "
             "sum_to)";
    }
  } catch (const Error&) {
  }
  return "";
}

// `grad` is taken by value and should be moved in: when this is the only
// handle to it and to its memory, the leaf can keep the buffer itself.
void accumulate_into_leaf(TensorImpl& leaf, Tensor grad) {
  if (grad.dtype() != leaf.dtype) grad = kernels::to(grad, leaf.dtype);
  if (!leaf.grad) {
    // Keep a private contiguous copy unless this gradient is already one
    // nobody else can see (the usual case: a fresh result of a kernel). A
    // gradient the caller passed in, or one handed to two inputs (add's
    // backward returns g for both), has other handles and is copied.
    const bool private_buffer =
        grad.impl_ptr().use_count() == 1 && grad.storage().use_count() == 1 && grad.is_contiguous() &&
        grad.storage()->nbytes() == static_cast<size_t>(grad.numel()) * element_size(grad.dtype());
    leaf.grad = (private_buffer ? grad.detach() : kernels::clone(grad)).impl_ptr();
    return;
  }
  kernels::binary_(kernels::Binary::Add, Tensor(leaf.grad), grad);
}

void add_to(std::unordered_map<Node*, Tensor>& grads, Node* node, const Tensor& grad) {
  auto it = grads.find(node);
  if (it == grads.end()) {
    grads.emplace(node, grad);
  } else {
    // A tensor used by several ops: its gradients add up.
    it->second = kernels::binary(kernels::Binary::Add, it->second, grad);
  }
}

// ---- gradient-ready hooks ----

struct HookEntry {
  uint64_t id;
  std::weak_ptr<TensorImpl> leaf;  // weak: a hook does not keep its tensor alive
  GradReadyHook fn;
};
std::mutex g_hooks_mutex;
std::vector<HookEntry> g_hooks;  // in registration order
uint64_t g_next_hook_id = 1;
std::atomic<int64_t> g_hook_count{0};  // backward() looks at this alone when it is 0
std::atomic<int64_t> g_hooked_calls{0};

// The hooked leaves of one backward's graph. A leaf's gradient is complete
// when every node that feeds its AccumulateGrad node has run (given it a
// gradient or not), so each node counts its producers still to run; the
// last one to finish hands the leaf its summed gradient at once, instead of
// waiting for the leaf's place in the topological order (which may be near
// the end: it depends on the order of the edges the search followed).
class ReadyTracker {
 public:
  // Null when no leaf of `order` has a hook.
  static std::unique_ptr<ReadyTracker> make(const std::vector<std::shared_ptr<Node>>& order) {
    auto t = std::make_unique<ReadyTracker>();
    {
      std::lock_guard<std::mutex> lock(g_hooks_mutex);
      for (const std::shared_ptr<Node>& node : order) {
        if (!node->is_accumulate_grad()) continue;
        for (const HookEntry& h : g_hooks) {
          if (h.leaf.lock() == node->leaf) t->hooks_[node.get()].push_back(h.fn);
        }
      }
    }
    if (t->hooks_.empty()) return nullptr;
    for (const std::shared_ptr<Node>& node : order) {
      for (const auto& next : node->next) {
        if (next && t->hooks_.count(next.get())) ++t->pending_[next.get()];
      }
    }
    return t;
  }

  // `node` has run (or received no gradient): its hooked leaves that now
  // have every contribution get their gradient and run their hooks.
  void producer_done(const Node& node, std::unordered_map<Node*, Tensor>& grads) {
    for (const auto& next : node.next) {
      if (!next || !hooks_.count(next.get()) || --pending_[next.get()] > 0) continue;
      auto found = grads.find(next.get());
      if (found == grads.end()) continue;  // no gradient reached this leaf
      Tensor g = std::move(found->second);
      grads.erase(found);  // done: its place in the order finds nothing left to do
      accumulate_into_leaf(*next->leaf, std::move(g));
      run_hooks(*next);
    }
  }

  void run_hooks(const Node& acc) {
    const Tensor leaf(acc.leaf);
    for (const GradReadyHook& fn : hooks_.at(const_cast<Node*>(&acc))) fn(leaf);
  }

 private:
  std::unordered_map<Node*, std::vector<GradReadyHook>> hooks_;
  std::unordered_map<Node*, int64_t> pending_;  // producers still to run
};

// The hooks of a leaf that is itself the root of backward().
void run_root_leaf_hooks(const Tensor& leaf) {
  std::vector<GradReadyHook> fns;
  {
    std::lock_guard<std::mutex> lock(g_hooks_mutex);
    for (const HookEntry& h : g_hooks) {
      if (h.leaf.lock() == leaf.impl_ptr()) fns.push_back(h.fn);
    }
  }
  if (!fns.empty()) g_hooked_calls.fetch_add(1);
  for (const GradReadyHook& fn : fns) fn(leaf);
}

}  // namespace

GradReadyHookHandle& GradReadyHookHandle::operator=(GradReadyHookHandle&& o) noexcept {
  if (this != &o) {
    remove();
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

void GradReadyHookHandle::remove() {
  if (id_ == 0) return;
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  const auto it = std::find_if(g_hooks.begin(), g_hooks.end(), [&](const HookEntry& h) { return h.id == id_; });
  if (it != g_hooks.end()) {
    g_hooks.erase(it);
    g_hook_count.fetch_sub(1);
  }
  id_ = 0;
}

GradReadyHookHandle register_grad_ready_hook(const Tensor& leaf, GradReadyHook hook) {
  RG_CHECK(leaf.defined() && leaf.is_leaf() && leaf.requires_grad(), "register_grad_ready_hook",
           "the tensor must be a leaf that requires grad (a parameter), got {}",
           !leaf.defined() ? "an undefined tensor"
           : !leaf.is_leaf() ? "the result of an op (it has a grad_fn)"
                             : "a tensor that does not require grad");
  RG_CHECK(static_cast<bool>(hook), "register_grad_ready_hook", "the hook is empty");
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  const uint64_t id = g_next_hook_id++;
  g_hooks.push_back({id, leaf.impl_ptr(), std::move(hook)});
  g_hook_count.fetch_add(1);
  return GradReadyHookHandle(id);
}

int64_t backward_calls_with_hooks() { return g_hooked_calls.load(); }

namespace {

// The gradient backward() starts from: the one given, checked against the
// root's shape, or 1 for a one-element root.
Tensor root_gradient(const Tensor& root, const Tensor& grad_in) {
  RG_CHECK(root.requires_grad(), "backward",
           "the tensor (shape {}) does not require grad and has no grad_fn: nothing to "
           "differentiate (did you call requires_grad_() on the inputs, or run under no_grad?)",
           shape_str(root.shape()));
  Tensor grad = grad_in;
  if (!grad.defined()) {
    RG_CHECK(root.numel() == 1, "backward",
             "grad can be implicitly created only for a one-element output, got shape {}; pass "
             "the gradient explicitly",
             shape_str(root.shape()));
    grad = ones(root.shape(), root.dtype());
  }
  RG_CHECK(grad.shape() == root.shape(), "backward",
           "the gradient has shape {} but the output has shape {}", shape_str(grad.shape()),
           shape_str(root.shape()));
  return grad;
}

// "[3, 8]" -> {3, 8}; {} when it is not a list of whole numbers.
Shape parse_shape(const std::string& quoted) {
  Shape out;
  size_t at = 1;
  while (at < quoted.size() && quoted[at] != ']') {
    size_t used = 0;
    try {
      out.push_back(std::stoll(quoted.substr(at), &used));
    } catch (const std::exception&) {
      return {};
    }
    at += used;
    while (at < quoted.size() && (quoted[at] == ',' || quoted[at] == ' ')) ++at;
  }
  return out;
}

// "dims 0 and 1" when QUOTED is SHAPE with two dims swapped, other than its
// last two (those are named as the transpose): a transpose of the wrong pair.
std::string dims_exchanged(const Shape& shape, const std::string& quoted) {
  const int64_t n = static_cast<int64_t>(shape.size());
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t b = a + 1; b < n; ++b) {
      if ((a == n - 2 && b == n - 1) || shape[a] == shape[b]) continue;
      Shape swapped = shape;
      std::swap(swapped[a], swapped[b]);
      if (shape_str(swapped) == quoted) return fmt::format("dims {} and {}", a, b);
    }
  }
  return "";
}

// The shapes "[3, 4]" a kernel's error quotes, each named by what has it
// among the rule's own tensors: "[4, 3] is input 0's shape transposed; [3, 5]
// the output gradient's". A shape nothing here has is left unnamed; one that
// several have is named by each (square shapes coincide). "" when none.
std::string name_quoted_shapes(const std::string& message, const Shape& grad_shape, const std::vector<Shape>& inputs) {
  const auto transposed = [](Shape s) {
    if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  };
  std::vector<std::string> seen, named;
  for (size_t open = message.find('['); open != std::string::npos; open = message.find('[', open + 1)) {
    const size_t close = message.find(']', open);
    if (close == std::string::npos) break;
    const std::string quoted = message.substr(open, close - open + 1);
    if (std::find(seen.begin(), seen.end(), quoted) != seen.end()) continue;
    seen.push_back(quoted);
    std::vector<std::string> whose;
    if (shape_str(grad_shape) == quoted) whose.push_back("the output gradient's");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (shape_str(inputs[i]) == quoted) whose.push_back(fmt::format("input {}'s", i));
      if (inputs[i].size() >= 2 && inputs[i] != transposed(inputs[i]) && shape_str(transposed(inputs[i])) == quoted)
        whose.push_back(fmt::format("input {}'s transposed (its last two dims in the other order)", i));
      if (const std::string dims = dims_exchanged(inputs[i], quoted); !dims.empty())
        whose.push_back(fmt::format("input {}'s with {} in the other order", i, dims));
    }
    // Then a flattening of one of them, (prod of the leading dims, last), or its transpose.
    std::vector<std::pair<std::string, Shape>> named_shapes = {{"the output gradient", grad_shape}};
    for (size_t i = 0; i < inputs.size(); ++i) named_shapes.push_back({fmt::format("input {}", i), inputs[i]});
    if (whose.empty()) {
      for (const auto& [name, shape] : named_shapes) {
        if (shape.size() < 3) continue;
        const Shape flat = {numel_of(shape) / shape.back(), shape.back()};
        if (shape_str(flat) == quoted) whose.push_back(name + "'s with its leading dims flattened");
        if (shape_str(transposed(flat)) == quoted)
          whose.push_back(name + "'s with its leading dims flattened, then transposed");
      }
    }
    // Else as many elements as some of them, in another shape (a reshape of one?).
    if (whose.empty()) {
      const Shape q = parse_shape(quoted);
      std::vector<std::string> same_count;
      for (const auto& [name, shape] : named_shapes)
        if (!q.empty() && numel_of(q) == numel_of(shape) && shape.size() >= 2)
          same_count.push_back(name + " " + shape_str(shape));
      if (!same_count.empty()) {
        std::string list;
        for (size_t k = 0; k < same_count.size(); ++k)
          list += (k == 0 ? "" : k + 1 == same_count.size() ? " and " : ", ") + same_count[k];
        named.push_back(fmt::format("{} has the {} elements of {}, in another shape", quoted, numel_of(q), list));
      }
      continue;
    }
    std::string list;
    for (size_t k = 0; k < whose.size(); ++k) list += (k == 0 ? "" : k + 1 == whose.size() ? " and " : ", ") + whose[k];
    named.push_back(quoted + " is " + list);
  }
  if (named.empty()) return "";
  std::string out = " (of the shapes quoted: ";
  for (size_t k = 0; k < named.size(); ++k) out += (k ? "; " : "") + named[k];
  return out + ")";
}

// For a kernel's "dtypes differ" error: the dtypes the rule had, the output
// gradient's and each input's, so that the error says which tensor brought
// which one (a saved input used without converting it to the gradient's dtype
// shows as an input's dtype among the kernel's). "" for any other error.
std::string dtypes_when_they_differ(const std::string& message, DType grad, const std::vector<DType>& inputs) {
  if (message.find("dtypes differ") == std::string::npos || inputs.empty()) return "";
  std::string out = fmt::format(" (the output gradient is {}", dtype_name(grad));
  for (size_t i = 0; i < inputs.size(); ++i) out += fmt::format("; input {} is {}", i, dtype_name(inputs[i]));
  return out + ")";
}

// One node's rule applied to its output gradient g: its inputs' gradients.
Grads run_rule(Node& node, const Tensor& g) {
  NeedsGrad needs;
  for (const auto& next : node.next) needs.push_back(next != nullptr);
  Grads input_grads;
  try {
    input_grads = node.backward(g, needs);
  } catch (const NotImplemented&) {
    throw;  // an exercise's stub: its own message, unchanged (course mode)
  } catch (const Error& e) {
    // Which rule raised it: an error from inside a backward otherwise names
    // only the kernel that failed (sum_to, expand, matmul), not the op whose
    // rule called it. One that names the op already is passed on as it is.
    if (std::string(e.what()).find("'" + node.name + "'") != std::string::npos) throw;
    // The shapes the rule had to work with: the output gradient's and its inputs'.
    std::string inputs;
    for (size_t i = 0; i < node.input_shapes.size(); ++i) {
      inputs += (i ? ", " : "") + shape_str(node.input_shapes[i]);
    }
    throw Error(fmt::format("in the backward of '{}' (output gradient of shape {}; input{} of shape {}): {}{}{}",
                            node.name, shape_str(g.shape()), node.input_shapes.size() == 1 ? "" : "s", inputs,
                            e.what(), name_quoted_shapes(e.what(), g.shape(), node.input_shapes),
                            dtypes_when_they_differ(e.what(), g.dtype(), node.input_dtypes)));
  }
  RG_CHECK(input_grads.size() == node.next.size(), "backward",
           "the backward of '{}' returned {} gradients for {} inputs", node.name,
           input_grads.size(), node.next.size());
  return input_grads;
}

// Adds each input's gradient, checked against the input's shape and cast to
// its dtype, to what its producer has received so far.
void send_to_inputs(const Node& node, const Grads& input_grads, std::unordered_map<Node*, Tensor>& grads) {
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (!node.next[i] || !input_grads[i].defined()) continue;
    Tensor gi = input_grads[i];
    RG_CHECK(gi.shape() == node.input_shapes[i], "backward",
             "the backward of '{}' returned a gradient of shape {} for input {} of shape {}{}",
             node.name, shape_str(gi.shape()), i, shape_str(node.input_shapes[i]),
             shape_hint(gi.shape(), node.input_shapes[i]));
    if (gi.dtype() != node.input_dtypes[i]) gi = kernels::to(gi, node.input_dtypes[i]);
    add_to(grads, node.next[i].get(), gi);
  }
}

}  // namespace

void backward(const Tensor& root, const Tensor& grad_in, bool retain_graph) {
  Tensor grad = root_gradient(root, grad_in);
  NoGradGuard no_grad;  // backward rules compute plain values (no second-order graph)

  if (root.is_leaf()) {
    accumulate_into_leaf(root.impl(), std::move(grad));
    if (g_hook_count.load() > 0) run_root_leaf_hooks(root);
    return;
  }
  std::unordered_map<Node*, Tensor> grads;
  grads.emplace(root.grad_fn().get(), grad);
  const std::vector<std::shared_ptr<Node>> order = topological_order(root.grad_fn());
  // Null unless a leaf of this graph has a gradient-ready hook.
  const std::unique_ptr<ReadyTracker> ready = g_hook_count.load() > 0 ? ReadyTracker::make(order) : nullptr;
  if (ready) g_hooked_calls.fetch_add(1);
  for (const std::shared_ptr<Node>& node : order) {
    auto found = grads.find(node.get());
    if (found == grads.end()) {  // no gradient reached this node
      if (ready) ready->producer_done(*node, grads);
      continue;
    }
    Tensor g = std::move(found->second);
    grads.erase(found);
    if (node->is_accumulate_grad()) {
      accumulate_into_leaf(*node->leaf, std::move(g));
      continue;
    }
    RG_CHECK(!node->released, "backward",
             "trying to backward through the graph a second time: '{}' already freed the "
             "tensors it saved. Pass retain_graph=true to the first backward() if you need a "
             "second one",
             node->name);
    if (auto out = node->output.lock(); out && out->retains_grad) accumulate_into_leaf(*out, g);
    send_to_inputs(*node, run_rule(*node, g), grads);
    if (ready) ready->producer_done(*node, grads);
    if (!retain_graph) node->release();
  }
}

}  // namespace ropegrad
