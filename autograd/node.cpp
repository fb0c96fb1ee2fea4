#include "autograd/node.h"

#include <cctype>

#include "tensor/print.h"

namespace ropegrad {

namespace {
thread_local bool g_grad_enabled = true;

std::string grad_fn_display_name(const Tensor& t) { return backward_name(t.grad_fn()->name); }

// Lets the tensor printer show grad_fn=<MulBackward0> without knowing Node.
const bool g_namer_installed = [] {
  set_grad_fn_namer(&grad_fn_display_name);
  return true;
}();
}  // namespace

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool enabled) { g_grad_enabled = enabled; }

SavedTensor::SavedTensor(const Tensor& t, std::string op)
    : tensor_(t.defined() ? t.detach() : Tensor()),
      version_(t.defined() ? t.version() : 0),
      op_(std::move(op)) {}

Tensor SavedTensor::unpack() const {
  if (tensor_.defined() && tensor_.version() != version_) {
    fail("backward",
         "one of the tensors needed for gradient computation has been modified by an in-place "
         "operation: a tensor of shape {} saved by '{}' is at version {}; expected version {}. "
         "Compute on a clone() instead of modifying it in place",
         shape_str(tensor_.shape()), op_, tensor_.version(), version_);
  }
  return tensor_;
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  if (t.grad_fn()) return t.grad_fn();
  // A leaf: reuse its accumulator so every use of the leaf meets in one node.
  TensorImpl& impl = t.impl();
  if (auto existing = impl.grad_accumulator.lock()) return existing;
  auto acc = std::make_shared<Node>();
  acc->name = "AccumulateGrad";
  acc->leaf = t.impl_ptr();
  acc->output_shape = t.shape();
  impl.grad_accumulator = acc;
  return acc;
}

void attach_node(const Tensor& output, std::string name, const std::vector<Tensor>& inputs,
                 BackwardFn backward) {
  auto node = std::make_shared<Node>();
  node->name = std::move(name);
  node->backward = std::move(backward);
  node->output_shape = output.shape();
  for (const Tensor& in : inputs) {
    node->next.push_back(gradient_edge(in));
    node->input_shapes.push_back(in.defined() ? in.shape() : Shape{});
    node->input_dtypes.push_back(in.defined() ? in.dtype() : kDefaultFloat);
  }
  node->output = output.impl_ptr();
  TensorImpl& out = output.impl();
  out.grad_fn = std::move(node);
  out.requires_grad = true;
}

std::string backward_name(const std::string& op) {
  if (op == "AccumulateGrad") return op;
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Backward0";
}

}  // namespace ropegrad
