// Optimizers (torch.optim semantics) and gradient clipping.
//
//   nn::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 0.1});
//   for (int64_t t = 0; t < steps; ++t) {
//     opt.set_lr(nn::cosine_lr(t, lr_max, lr_min, warmup, cycle));
//     opt.zero_grad();
//     Tensor loss = ...;
//     backward(loss);
//     nn::clip_grad_norm_(model.parameters(), 1.0);
//     opt.step();
//   }
//
// step() runs without recording a graph (as torch.optim's @no_grad) and skips
// parameters whose .grad is undefined, so their state does not advance. The
// update of each parameter is one fused pass over its elements, written with
// the same operations in the same order as torch's single-tensor kernels, in
// the parameter's own dtype.
//
// state_dict() is a snapshot (copies) that load_state_dict() restores
// exactly; its keys:
//   "step"                  int64 0-d: number of step() calls
//   "lr"                    float64 0-d: the current learning rate
//   "settings.<name>"       float64 0-d: each of settings() (AdamW beta1,
//                           beta2, eps, weight_decay; SGD momentum,
//                           dampening, weight_decay, nesterov as 0 or 1)
//   "state.<i>.<name>"      per parameter i (its index in `params`), present
//                           once that parameter has been updated:
//     SGD    momentum_buffer              (param's shape and dtype; momentum != 0)
//     AdamW  step (int64 0-d), exp_avg, exp_avg_sq
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "nn/module.h"

namespace ropegrad::nn {

// The first member of an optimizer's options: it takes no value, so the
// options can only be given by name ({.lr = 1e-3, .eps = 1e-6}); positional
// braces ({1e-3, {0.9, 0.999}, 0.01}, where 0.01 meant as a weight decay
// would land in eps) do not compile.
struct ByNameOnly {
  explicit ByNameOnly() = default;
};

// One named number of an optimizer's configuration, besides the learning
// rate (which a schedule changes every step and the state keeps as "lr").
struct OptimizerSetting {
  std::string name;
  double value;
};

// What load_state_dict does with the settings a state dict saved.
enum class OptimizerSettingsOnLoad {
  must_match,  // a saved setting that differs from this optimizer's is an Error naming each (the default)
  keep_mine,   // keep this optimizer's settings; the saved ones are ignored
  take_saved,  // adopt the saved settings (checked as the constructor checks them)
};

// What load_state_dict raises when must_match finds saved settings that
// differ from the optimizer's: its message names the C++ choices
// (OptimizerSettingsOnLoad::keep_mine, take_saved); `differences` lists each
// setting, saved and this optimizer's, for a caller that words it for its own
// users (`ropegrad train --resume` names its flags).
class OptimizerSettingsDiffer : public Error {
 public:
  struct Difference {
    std::string name;
    double saved, mine;
  };
  OptimizerSettingsDiffer(const std::string& message, std::vector<Difference> differences)
      : Error(message), differences(std::move(differences)) {}
  std::vector<Difference> differences;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The class name used in errors ("AdamW").
  virtual std::string type_name() const = 0;

  // One update of every parameter that has a gradient.
  virtual void step() = 0;
  // Drops every parameter's .grad (torch's zero_grad(set_to_none=True)).
  void zero_grad();

  double lr() const { return lr_; }
  // The learning rate of the next step() (a schedule sets it every step).
  void set_lr(double lr);
  // Number of step() calls so far (restored by load_state_dict).
  int64_t step_count() const { return step_count_; }
  const std::vector<Tensor>& params() const { return params_; }

  // The settings, in a fixed order, as state_dict() saves them.
  virtual std::vector<OptimizerSetting> settings() const = 0;

  virtual StateDict state_dict() const;
  // Restores a state_dict() of an optimizer of the same type over parameters
  // of the same shapes. Strict: a missing, unexpected or wrongly shaped entry
  // is an Error naming the key. Saved settings are compared with this
  // optimizer's as on_settings says; a state dict without any (written before
  // they were saved) loads, and the optimizer keeps its own, unchecked.
  // A failed load leaves the optimizer as it was.
  virtual void load_state_dict(const StateDict& state,
                               OptimizerSettingsOnLoad on_settings = OptimizerSettingsOnLoad::must_match) = 0;

 protected:
  // Checks params (non-empty, defined, floating, leaf, no duplicates) and lr.
  Optimizer(std::vector<Tensor> params, double lr, const std::string& type);

  // ---- helpers for subclasses' state_dict / load_state_dict ----
  static std::string state_key(size_t index, const std::string& name);
  // A copy of state[key] checked to have param `index`'s shape, cast to its dtype.
  Tensor load_param_like(const StateDict& state, const std::string& key, size_t index,
                         std::set<std::string>& used) const;
  // A 0-d (or one-element) int64 entry.
  int64_t load_int(const StateDict& state, const std::string& key,
                   std::set<std::string>& used) const;
  // Whether any "state.<index>." key is present.
  static bool has_param_state(const StateDict& state, size_t index);
  // Fails naming the first key of `state` not in `used`.
  void check_no_unexpected(const StateDict& state, const std::set<std::string>& used) const;
  // Loads "step" and "lr" (the base's keys) into locals checked for validity.
  std::pair<int64_t, double> load_base(const StateDict& state, std::set<std::string>& used) const;
  // The settings to adopt: the saved ones with take_saved, else nullopt
  // (must_match has checked that they equal settings()). nullopt too when
  // the state holds none; some but not all is an Error naming the missing key.
  std::optional<std::vector<OptimizerSetting>> load_settings(const StateDict& state, std::set<std::string>& used,
                                                             OptimizerSettingsOnLoad on_settings) const;
  void set_step_count(int64_t n) { step_count_ = n; }
  void count_step() { ++step_count_; }

 private:
  std::vector<Tensor> params_;
  double lr_;
  int64_t step_count_ = 0;
};

// torch.optim.SGD: d = g + weight_decay * p; with momentum,
// buf = momentum * buf + (1 - dampening) * d (buf = d on the first step) and
// d = nesterov ? d + momentum * buf : buf; then p -= lr * d.
// What the optimizers' chained setters share (libtorch's habit, any order):
// the options they fill, which the chain converts to, and `set`, which sets
// one field and returns the chain for the next call.
template <typename Options, typename Derived>
struct OptionsChain {
  operator Options() const { return options; }  // NOLINT: converts where Options is expected
  Options options;

 protected:
  template <typename T>
  Derived& set(T Options::*field, T v) {
    options.*field = v;
    return static_cast<Derived&>(*this);
  }
};

// Defaults are torch's; given by name, in this order:
//   nn::SGD opt(params, {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4});
// or, in any order, with chained setters as libtorch's SGDOptions:
//   nn::SGD opt(params, nn::SGDOptions::chain(0.1).weight_decay(1e-4).momentum(0.9));
struct SGDOptions {
  ByNameOnly by_name_only{};
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;

  struct Chain;
  static Chain chain(double lr = 1e-3);
};

// SGDOptions::chain(lr): each setter returns the chain, which converts to SGDOptions.
struct SGDOptions::Chain : OptionsChain<SGDOptions, SGDOptions::Chain> {
  Chain& lr(double v) { return set(&SGDOptions::lr, v); }
  Chain& momentum(double v) { return set(&SGDOptions::momentum, v); }
  Chain& dampening(double v) { return set(&SGDOptions::dampening, v); }
  Chain& weight_decay(double v) { return set(&SGDOptions::weight_decay, v); }
  Chain& nesterov(bool v) { return set(&SGDOptions::nesterov, v); }
};

inline SGDOptions::Chain SGDOptions::chain(double lr) { return SGDOptions::Chain{}.lr(lr); }

class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<Tensor> params, SGDOptions options = {});
  std::string type_name() const override { return "SGD"; }
  void step() override;
  std::vector<OptimizerSetting> settings() const override;
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state,
                       OptimizerSettingsOnLoad on_settings = OptimizerSettingsOnLoad::must_match) override;

  double momentum() const { return momentum_; }
  double weight_decay() const { return weight_decay_; }
  // The momentum buffer of parameter i (undefined before its first update).
  Tensor momentum_buffer(size_t i) const { return buffers_.at(i); }

 private:
  double momentum_, weight_decay_, dampening_;
  bool nesterov_;
  std::vector<Tensor> buffers_;  // per parameter; undefined until first used
};

// torch.optim.AdamW (single-tensor, amsgrad=False), per parameter with a grad:
//   step += 1
//   p *= 1 - lr * weight_decay
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
// The scalars of one AdamW update of one parameter, in its dtype (the plain
// update in optim/optim.cpp and its fast form, optim/fast/adamw_fast.h, share them).
template <typename T>
struct AdamStepScalars {
  T decay;                         // 1 - lr * weight_decay
  T beta1, one_minus_beta1, beta2, one_minus_beta2;
  T bias_correction2_sqrt;         // sqrt(1 - beta2^step)
  T neg_step_size;                 // -lr / (1 - beta1^step)
  T eps;
};

// Defaults are torch's; given by name, in this order:
//   nn::AdamW opt(params, {.lr = 3e-3, .betas = {0.9, 0.95}, .weight_decay = 0.1});
// or, in any order (CS336's calls name lr, weight_decay, betas, eps), with
// chained setters as libtorch's AdamWOptions:
//   nn::AdamW opt(params, nn::AdamWOptions::chain(3e-3).weight_decay(0.1).betas(0.9, 0.95));
struct AdamWOptions {
  ByNameOnly by_name_only{};
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.01;

  struct Chain;
  static Chain chain(double lr = 1e-3);
};

// AdamWOptions::chain(lr): each setter returns the chain, which converts to AdamWOptions.
struct AdamWOptions::Chain : OptionsChain<AdamWOptions, AdamWOptions::Chain> {
  Chain& lr(double v) { return set(&AdamWOptions::lr, v); }
  Chain& betas(double beta1, double beta2) { return set(&AdamWOptions::betas, std::pair<double, double>{beta1, beta2}); }
  Chain& betas(std::pair<double, double> v) { return set(&AdamWOptions::betas, v); }
  Chain& eps(double v) { return set(&AdamWOptions::eps, v); }
  Chain& weight_decay(double v) { return set(&AdamWOptions::weight_decay, v); }
};

inline AdamWOptions::Chain AdamWOptions::chain(double lr) { return AdamWOptions::Chain{}.lr(lr); }

class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  // The positional constructor of earlier releases is gone: its settings are
  // named now, so a weight decay can never land in eps.
  template <int removed = 0>
  AdamW(std::vector<Tensor> params, double, std::pair<double, double>, double = 0, double = 0)
      : AdamW(std::move(params)) {
    static_assert(removed != 0,
                  "AdamW(params, lr, betas, eps, weight_decay) is gone: name the settings, "
                  "AdamW(params, {.lr = ..., .betas = {b1, b2}, .eps = ..., .weight_decay = ...}) in that order, or "
                  "AdamW(params, AdamWOptions::chain(lr).weight_decay(wd).betas(b1, b2).eps(eps)) in any order");
  }
  std::string type_name() const override { return "AdamW"; }
  void step() override;
  // beta1, beta2, eps, weight_decay
  std::vector<OptimizerSetting> settings() const override;
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state,
                       OptimizerSettingsOnLoad on_settings = OptimizerSettingsOnLoad::must_match) override;

  std::pair<double, double> betas() const { return {beta1_, beta2_}; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }

  struct ParamState {
    int64_t step = 0;
    Tensor exp_avg;     // first moment, param's shape and dtype
    Tensor exp_avg_sq;  // second moment
  };
  // Parameter i's state; nullopt until its first update.
  const std::optional<ParamState>& state(size_t i) const { return state_.at(i); }

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  std::vector<std::optional<ParamState>> state_;
};

// AdamW::step's update of n float32 elements in place (p, m, v from g) at
// update number `step` (1 for the first): the same expressions, so a slice
// of a parameter updated alone gets the bits the whole parameter's update
// gives it. ZeRO-1 (dist/zero_adamw.h) updates each rank's slice with it.
void adamw_update_elements(float* p, const float* g, float* m, float* v, int64_t n, double lr, double beta1,
                           double beta2, double eps, double weight_decay, int64_t step);

// Rescales the gradients of `params` (those that have one) so that their
// global L2 norm, accumulated in double, is at most max_norm: when the norm
// exceeds max_norm every grad is multiplied by max_norm / (norm + 1e-6).
// Returns the norm before clipping, as torch.nn.utils.clip_grad_norm_.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace ropegrad::nn
