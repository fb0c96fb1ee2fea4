#include "nn/module.h"

#include <algorithm>
#include <unordered_set>

namespace ropegrad::nn {

void Module::check_new_name(const std::string& name) const {
  RG_CHECK(!name.empty() && name.find('.') == std::string::npos, type_name(),
           "invalid member name '{}' (must be non-empty and contain no '.')", name);
  const auto taken = [&](const std::string& n) {
    return std::any_of(parameters_.begin(), parameters_.end(), [&](const auto& p) { return p.first == n; }) ||
           std::any_of(buffers_.begin(), buffers_.end(), [&](const auto& b) { return b.name == n; }) ||
           std::any_of(children_.begin(), children_.end(), [&](const auto& c) { return c.first == n; });
  };
  RG_CHECK(!taken(name), type_name(), "a member named '{}' is already registered", name);
}

Tensor Module::register_parameter(std::string name, Tensor value) {
  check_new_name(name);
  RG_CHECK(value.is_floating_point(), type_name(), "parameter '{}' must be floating point, got {}", name,
           dtype_name(value.dtype()));
  Tensor param = value.is_leaf() ? value : value.detach();
  param.requires_grad_(true);
  parameters_.emplace_back(std::move(name), param);
  return param;
}

Tensor Module::register_buffer(std::string name, Tensor value, bool persistent) {
  check_new_name(name);
  buffers_.push_back({std::move(name), value, persistent});
  return value;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>* params,
                     std::vector<std::pair<std::string, Tensor>>* buffers, bool persistent_only) const {
  if (params != nullptr) {
    for (const auto& [name, t] : parameters_) params->emplace_back(prefix + name, t);
  }
  if (buffers != nullptr) {
    for (const Buffer& b : buffers_) {
      if (!persistent_only || b.persistent) buffers->emplace_back(prefix + b.name, b.value);
    }
  }
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, buffers, persistent_only);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", &all, nullptr, false);
  // A tensor registered twice (tied weights) is listed once, under its first
  // name, as torch does: an optimizer must not step it twice.
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  for (auto& entry : all) {
    if (seen.insert(&entry.second.impl()).second) out.push_back(std::move(entry));
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", nullptr, &out, false);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::zero_grad() {
  for (const Tensor& p : parameters()) p.set_grad(Tensor());
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::to(DType dtype) {
  RG_CHECK(is_floating(dtype), type_name(), "to: modules convert between float dtypes, got {}", dtype_name(dtype));
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", &all, &all, false);
  for (auto& [name, t] : all) {
    if (!t.is_floating_point() || t.dtype() == dtype) continue;
    const Tensor grad = t.grad();  // set_data drops it; convert it too, as torch's m.double() does
    t.set_data(kernels::to(t, dtype));
    if (grad.defined()) t.set_grad(kernels::to(grad, dtype));
  }
}

StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", &all, &all, true);
  StateDict out;
  for (auto& [name, t] : all) out.emplace(name, t.detach());
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", &all, &all, true);
  std::vector<std::string> missing, mismatched, unexpected;
  for (const auto& [name, t] : all) {
    auto it = state.find(name);
    if (it == state.end()) {
      missing.push_back(name);
    } else if (it->second.shape() != t.shape()) {
      mismatched.push_back(fmt::format("{}: checkpoint {} vs model {}", name, shape_str(it->second.shape()),
                                       shape_str(t.shape())));
    }
  }
  for (const auto& entry : state) {
    const std::string& name = entry.first;  // a plain reference: lambdas may capture it (C++20 bindings not in clang 14)
    if (std::none_of(all.begin(), all.end(), [&](const auto& p) { return p.first == name; })) {
      unexpected.push_back(name);
    }
  }
  RG_CHECK(mismatched.empty(), "load_state_dict", "{}: size mismatch for {}", type_name(),
           fmt::join(mismatched, "; "));
  RG_CHECK(!strict || (missing.empty() && unexpected.empty()), "load_state_dict",
           "{}: missing keys [{}], unexpected keys [{}]", type_name(), fmt::join(missing, ", "),
           fmt::join(unexpected, ", "));
  NoGradGuard no_grad;
  for (auto& [name, t] : all) {
    auto it = state.find(name);
    if (it == state.end()) continue;
    Tensor target = t;
    copy_(target, it->second);
  }
}

}  // namespace ropegrad::nn
