// Modules in the spirit of torch::nn::Module: a module owns named
// parameters, buffers and submodules, and everything that walks a model
// (parameters(), state_dict(), zero_grad(), to(dtype), train/eval) is
// written once here.
//
//   struct Linear : Module {
//     Tensor weight;  // (d_out, d_in)
//     Linear(int64_t d_in, int64_t d_out) {
//       weight = register_parameter("weight", init::linear_weight(d_out, d_in));
//     }
//   };
//
// Names are dotted paths, as in PyTorch: "layers.0.attn.q_proj.weight".
// Forward functions are ordinary member functions (their signatures differ
// from module to module), as in libtorch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"

namespace ropegrad::nn {

// name -> tensor; std::map keeps names sorted, which is also the order of a
// safetensors header.
using StateDict = std::map<std::string, Tensor>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name printed in errors and summaries ("Linear").
  virtual std::string type_name() const { return "Module"; }

  // ---- walking the tree ----------------------------------------------------------
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  // Number of parameter elements, in this module and below.
  int64_t num_parameters() const;

  // ---- training state ----------------------------------------------------------------
  // Drops every parameter's .grad (torch's zero_grad(set_to_none=True)).
  void zero_grad();
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Converts every floating parameter and buffer to `dtype`, in place: a whole
  // model in float64 can then be gradchecked.
  void to(DType dtype);

  // ---- state ---------------------------------------------------------------------------
  // Parameters and persistent buffers, by dotted name (views of the live data).
  StateDict state_dict() const;
  // Copies values into the existing tensors. Every key must match a
  // parameter or persistent buffer of the same shape (when strict, no key may
  // be missing or unexpected); errors list the offending names and shapes.
  void load_state_dict(const StateDict& state, bool strict = true);

 protected:
  // Registers a trainable tensor; it is made a leaf that requires grad.
  Tensor register_parameter(std::string name, Tensor value);
  // Registers a non-trainable tensor (persistent ones go into state_dict).
  Tensor register_buffer(std::string name, Tensor value, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    check_new_name(name);
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  struct Buffer {
    std::string name;
    Tensor value;
    bool persistent;
  };
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>* params,
               std::vector<std::pair<std::string, Tensor>>* buffers, bool persistent_only) const;

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<Buffer> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// An indexed list of submodules, named "0", "1", ... (torch.nn.ModuleList).
template <typename M>
class ModuleList : public Module {
 public:
  std::string type_name() const override { return "ModuleList"; }
  void push_back(std::shared_ptr<M> module) {
    items_.push_back(register_module(std::to_string(items_.size()), std::move(module)));
  }
  size_t size() const { return items_.size(); }
  M& operator[](size_t i) const { return *items_.at(i); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

}  // namespace ropegrad::nn
