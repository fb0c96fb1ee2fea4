#include "optim/optim.h"
#include "optim/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

#include <cmath>

namespace ropegrad::nn {

namespace {

// The parameter's data as one contiguous block the fused loops can write:
// the parameter itself, or a copy that finish_update() writes back.
Tensor writable_block(const Tensor& param) {
  return param.is_contiguous() ? param.detach() : kernels::clone(param);
}

void finish_update(const Tensor& param, const Tensor& block) {
  if (!block.shares_storage_with(param)) kernels::copy_into(param, block);
  param.bump_version();  // a backward that saved the parameter must notice
}

}  // namespace

// ---- Optimizer ------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<Tensor> params, double lr, const std::string& type)
    : params_(std::move(params)), lr_(lr) {
  RG_CHECK(!params_.empty(), type, "optimizer got an empty parameter list");
  RG_CHECK(lr >= 0, type, "invalid learning rate {} (must be >= 0)", lr);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    RG_CHECK(p.defined(), type, "parameter {} is an undefined tensor", i);
    RG_CHECK(p.is_floating_point(), type,
             "parameter {} has dtype {}; only floating-point tensors can be optimized", i,
             dtype_name(p.dtype()));
    RG_CHECK(p.is_leaf(), type, "can't optimize a non-leaf tensor (parameter {}, shape {})", i,
             shape_str(p.shape()));
    for (size_t j = 0; j < i; ++j) {
      RG_CHECK(!params_[j].is_same(p), type,
               "parameter {} is the same tensor as parameter {} (it would be updated twice)", i, j);
    }
  }
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) p.set_grad(Tensor());
}

void Optimizer::set_lr(double lr) {
  RG_CHECK(lr >= 0, type_name() + ".set_lr", "invalid learning rate {} (must be >= 0)", lr);
  lr_ = lr;
}

std::string Optimizer::state_key(size_t index, const std::string& name) {
  return fmt::format("state.{}.{}", index, name);
}

bool Optimizer::has_param_state(const StateDict& state, size_t index) {
  const std::string prefix = fmt::format("state.{}.", index);
  auto it = state.lower_bound(prefix);
  return it != state.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

Tensor Optimizer::load_param_like(const StateDict& state, const std::string& key, size_t index,
                                  std::set<std::string>& used) const {
  const std::string op = type_name() + ".load_state_dict";
  auto it = state.find(key);
  RG_CHECK(it != state.end(), op, "missing key '{}'", key);
  const Tensor& value = it->second;
  const Tensor& param = params_.at(index);
  RG_CHECK(value.defined(), op, "key '{}' holds an undefined tensor", key);
  RG_CHECK(value.shape() == param.shape(), op,
           "key '{}' has shape {} but parameter {} has shape {}", key, shape_str(value.shape()),
           index, shape_str(param.shape()));
  RG_CHECK(value.is_floating_point(), op, "key '{}' has dtype {}, expected a floating dtype", key,
           dtype_name(value.dtype()));
  used.insert(key);
  // A private copy in the parameter's dtype (as torch casts loaded state).
  Tensor copy = kernels::to(value, param.dtype());
  return copy.shares_storage_with(value) ? kernels::clone(value) : kernels::contiguous(copy);
}

int64_t Optimizer::load_int(const StateDict& state, const std::string& key,
                            std::set<std::string>& used) const {
  const std::string op = type_name() + ".load_state_dict";
  auto it = state.find(key);
  RG_CHECK(it != state.end(), op, "missing key '{}'", key);
  const Tensor& value = it->second;
  RG_CHECK(value.defined() && value.numel() == 1 && value.dtype() == DType::Int64, op,
           "key '{}' must be a one-element int64 tensor, got shape {} and dtype {}", key,
           value.defined() ? shape_str(value.shape()) : "(undefined)",
           value.defined() ? dtype_name(value.dtype()) : "(undefined)");
  used.insert(key);
  return value.item<int64_t>();
}

void Optimizer::check_no_unexpected(const StateDict& state,
                                    const std::set<std::string>& used) const {
  for (const auto& [key, value] : state) {
    RG_CHECK(used.count(key) != 0, type_name() + ".load_state_dict",
             "unexpected key '{}' (this {} has {} parameters)", key, type_name(), params_.size());
  }
}

std::pair<int64_t, double> Optimizer::load_base(const StateDict& state,
                                                std::set<std::string>& used) const {
  const std::string op = type_name() + ".load_state_dict";
  const int64_t steps = load_int(state, "step", used);
  RG_CHECK(steps >= 0, op, "key 'step' holds {}, must be >= 0", steps);
  auto it = state.find("lr");
  RG_CHECK(it != state.end(), op, "missing key 'lr'");
  RG_CHECK(it->second.defined() && it->second.numel() == 1 && it->second.is_floating_point(), op,
           "key 'lr' must be a one-element floating tensor");
  const double lr = it->second.item<double>();
  RG_CHECK(lr >= 0, op, "key 'lr' holds an invalid learning rate {}", lr);
  used.insert("lr");
  return {steps, lr};
}

std::optional<std::vector<OptimizerSetting>> Optimizer::load_settings(const StateDict& state,
                                                                      std::set<std::string>& used,
                                                                      OptimizerSettingsOnLoad on_settings) const {
  const std::string op = type_name() + ".load_state_dict";
  const std::vector<OptimizerSetting> mine = settings();
  std::vector<OptimizerSetting> saved;
  std::string missing;
  for (const OptimizerSetting& s : mine) {
    const std::string key = "settings." + s.name;
    auto it = state.find(key);
    if (it == state.end()) {
      if (missing.empty()) missing = key;
      continue;
    }
    const Tensor& value = it->second;
    RG_CHECK(value.defined() && value.numel() == 1 && value.is_floating_point(), op,
             "key '{}' must be a one-element floating tensor", key);
    used.insert(key);
    saved.push_back({s.name, value.item<double>()});
  }
  if (saved.empty()) return std::nullopt;  // saved before settings were: nothing to compare
  RG_CHECK(missing.empty(), op, "missing key '{}' (the state holds some settings but not all)", missing);
  if (on_settings == OptimizerSettingsOnLoad::take_saved) return saved;
  if (on_settings == OptimizerSettingsOnLoad::keep_mine) return std::nullopt;
  std::vector<std::string> differ;
  std::vector<OptimizerSettingsDiffer::Difference> differences;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (saved[i].value == mine[i].value) continue;  // a NaN differs too
    differ.push_back(fmt::format("{} saved {}, this optimizer {}", mine[i].name, saved[i].value, mine[i].value));
    differences.push_back({mine[i].name, saved[i].value, mine[i].value});
  }
  if (differ.empty()) return std::nullopt;
  throw OptimizerSettingsDiffer(
      fmt::format("{}: the saved settings differ from this optimizer's: {} (load with "
                  "OptimizerSettingsOnLoad::keep_mine to keep this optimizer's, or take_saved to adopt the saved ones)",
                  op, fmt::join(differ, "; ")),
      std::move(differences));
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  out["step"] = scalar_tensor(step_count_, DType::Int64);
  out["lr"] = scalar_tensor(lr_, DType::Float64);
  for (const OptimizerSetting& s : settings()) out["settings." + s.name] = scalar_tensor(s.value, DType::Float64);
  return out;
}

// ---- SGD ------------------------------------------------------------------------------

namespace {

// The constructor's checks, also those of settings a load adopts (op names which).
void check_sgd_settings(double momentum, double dampening, double weight_decay, bool nesterov, const std::string& op) {
  RG_CHECK(momentum >= 0, op, "invalid momentum value {} (must be >= 0)", momentum);
  RG_CHECK(weight_decay >= 0, op, "invalid weight_decay value {} (must be >= 0)", weight_decay);
  RG_CHECK(std::isfinite(dampening), op, "invalid dampening value {}", dampening);
  RG_CHECK(!nesterov || (momentum > 0 && dampening == 0), op,
           "Nesterov momentum requires a momentum and zero dampening (got momentum {}, dampening {})", momentum,
           dampening);
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params), options.lr, "SGD"),
      momentum_(options.momentum),
      weight_decay_(options.weight_decay),
      dampening_(options.dampening),
      nesterov_(options.nesterov),
      buffers_(this->params().size()) {
  check_sgd_settings(momentum_, dampening_, weight_decay_, nesterov_, "SGD");
}

std::vector<OptimizerSetting> SGD::settings() const {
  return {{"momentum", momentum_}, {"dampening", dampening_}, {"weight_decay", weight_decay_},
          {"nesterov", nesterov_ ? 1.0 : 0.0}};
}

namespace {

// One parameter's SGD update, in T arithmetic as torch's kernels:
//   d = g + wd*p;  buf = buf*mom + (1-damp)*d  (buf = d when new);
//   d = nesterov ? d + mom*buf : buf;  p = p + (-lr)*d
template <typename T>
void sgd_update(T* p, const T* g, T* buf, bool new_buf, int64_t n, double lr, double momentum,
                double weight_decay, double dampening, bool nesterov) {
  const T wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum);
  const T keep = static_cast<T>(1 - dampening), neg_lr = static_cast<T>(-lr);
  for (int64_t i = 0; i < n; ++i) {
    T d = weight_decay != 0 ? g[i] + wd * p[i] : g[i];
    if (buf != nullptr) {
      const T b = new_buf ? d : buf[i] * mom + keep * d;
      buf[i] = b;
      d = nesterov ? d + mom * b : b;
    }
    p[i] = p[i] + neg_lr * d;
  }
}

}  // namespace

void SGD::step() {
  NoGradGuard no_grad;
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    const Tensor& param = ps[i];
    const Tensor grad = param.grad();
    if (!grad.defined()) continue;
    const Tensor g = kernels::contiguous(grad);
    Tensor block = writable_block(param);
    bool new_buf = false;
    if (momentum_ != 0 && !buffers_[i].defined()) {
      buffers_[i] = Tensor::empty(param.shape(), param.dtype());
      new_buf = true;
    }
    const Tensor& buf = buffers_[i];
    dispatch_floating(param.dtype(), "SGD.step", [&](auto tag) {
      using T = decltype(tag);
      sgd_update<T>(block.data_ptr<T>(), g.data_ptr<T>(),
                    momentum_ != 0 ? buf.data_ptr<T>() : nullptr, new_buf, param.numel(), lr(),
                    momentum_, weight_decay_, dampening_, nesterov_);
    });
    if (momentum_ != 0) buf.bump_version();
    finish_update(param, block);
  }
  count_step();
}

StateDict SGD::state_dict() const {
  StateDict out = Optimizer::state_dict();
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].defined()) out[state_key(i, "momentum_buffer")] = kernels::clone(buffers_[i]);
  }
  return out;
}

void SGD::load_state_dict(const StateDict& state, OptimizerSettingsOnLoad on_settings) {
  std::set<std::string> used;
  auto [steps, lr] = load_base(state, used);
  const auto taken = load_settings(state, used, on_settings);  // in settings() order
  if (taken) {
    const double nesterov = (*taken)[3].value;
    RG_CHECK(nesterov == 0 || nesterov == 1, "SGD.load_state_dict", "key 'settings.nesterov' holds {}, not 0 or 1",
             nesterov);
    check_sgd_settings((*taken)[0].value, (*taken)[1].value, (*taken)[2].value, nesterov == 1, "SGD.load_state_dict");
  }
  std::vector<Tensor> buffers(params().size());
  for (size_t i = 0; i < params().size(); ++i) {
    if (has_param_state(state, i))
      buffers[i] = load_param_like(state, state_key(i, "momentum_buffer"), i, used);
  }
  check_no_unexpected(state, used);
  // Only now that everything is valid: a failed load leaves the optimizer as it was.
  buffers_ = std::move(buffers);
  set_step_count(steps);
  set_lr(lr);
  if (taken) {
    momentum_ = (*taken)[0].value;
    dampening_ = (*taken)[1].value;
    weight_decay_ = (*taken)[2].value;
    nesterov_ = (*taken)[3].value == 1;
  }
}

// ---- AdamW ----------------------------------------------------------------------------

namespace {

// The constructor's checks, also those of settings a load adopts (op names which).
void check_adamw_settings(double beta1, double beta2, double eps, double weight_decay, const std::string& op) {
  RG_CHECK(eps >= 0, op, "invalid epsilon value {} (must be >= 0)", eps);
  RG_CHECK(beta1 >= 0 && beta1 < 1, op, "invalid beta parameter at index 0: {} (must be in [0, 1))", beta1);
  RG_CHECK(beta2 >= 0 && beta2 < 1, op, "invalid beta parameter at index 1: {} (must be in [0, 1))", beta2);
  RG_CHECK(weight_decay >= 0, op, "invalid weight_decay value {} (must be >= 0)", weight_decay);
}

}  // namespace

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer(std::move(params), options.lr, "AdamW"),
      beta1_(options.betas.first),
      beta2_(options.betas.second),
      eps_(options.eps),
      weight_decay_(options.weight_decay),
      state_(this->params().size()) {
  check_adamw_settings(beta1_, beta2_, eps_, weight_decay_, "AdamW");
}

std::vector<OptimizerSetting> AdamW::settings() const {
  return {{"beta1", beta1_}, {"beta2", beta2_}, {"eps", eps_}, {"weight_decay", weight_decay_}};
}

namespace {

// The update's coefficients in double, before they are cast to the parameter's dtype.
using AdamCoefficients = AdamStepScalars<double>;

// The coefficients of one AdamW update at `step` (1 for the first update of a parameter).
AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay,
                                   int64_t step) {
  // BEGIN EXERCISE ex13-adamw
  const double t = static_cast<double>(step);
  const double bias_correction1 = 1 - std::pow(beta1, t);
  const double bias_correction2 = 1 - std::pow(beta2, t);
  return AdamCoefficients{1 - lr * weight_decay, beta1, 1 - beta1, beta2, 1 - beta2, std::sqrt(bias_correction2),
                          -(lr / bias_correction1), eps};
  // END EXERCISE ex13-adamw
}

// The coefficients in the parameter's dtype: torch casts each scalar of its
// in-place ops to the tensor's dtype.
template <typename T>
AdamStepScalars<T> in_dtype(const AdamCoefficients& c) {
  return {static_cast<T>(c.decay),          static_cast<T>(c.beta1),
          static_cast<T>(c.one_minus_beta1), static_cast<T>(c.beta2),
          static_cast<T>(c.one_minus_beta2), static_cast<T>(c.bias_correction2_sqrt),
          static_cast<T>(c.neg_step_size),   static_cast<T>(c.eps)};
}

}  // namespace

// One parameter's AdamW update (chapter 13): torch's sequence of in-place ops
// in one pass, each op in T arithmetic.
template <typename T>
void plain::adamw_update(T* p, const T* g, T* m, T* v, int64_t n, const AdamStepScalars<T>& c) {
  // BEGIN EXERCISE ex13-adamw
  for (int64_t i = 0; i < n; ++i) {
    const T pi = p[i] * c.decay;
    const T mi = m[i] * c.beta1 + c.one_minus_beta1 * g[i];
    const T vi = v[i] * c.beta2 + c.one_minus_beta2 * g[i] * g[i];
    const T denom = std::sqrt(vi) / c.bias_correction2_sqrt + c.eps;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + c.neg_step_size * mi / denom;
  }
  // END EXERCISE ex13-adamw
}

void AdamW::step() {
  NoGradGuard no_grad;
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    const Tensor& param = ps[i];
    const Tensor grad = param.grad();
    if (!grad.defined()) continue;
    if (!state_[i]) {
      state_[i] =
          ParamState{0, zeros(param.shape(), param.dtype()), zeros(param.shape(), param.dtype())};
    }
    ParamState& s = *state_[i];
    s.step += 1;
    const AdamCoefficients c = adam_coefficients(lr(), beta1_, beta2_, eps_, weight_decay_, s.step);
    const Tensor g = kernels::contiguous(grad);
    Tensor block = writable_block(param);
    dispatch_floating(param.dtype(), "AdamW.step", [&](auto tag) {
      using T = decltype(tag);
      T* p = block.data_ptr<T>();
      const T* gp = g.data_ptr<T>();
      T* m = s.exp_avg.data_ptr<T>();
      T* v = s.exp_avg_sq.data_ptr<T>();
      adamw_update<T>(p, gp, m, v, param.numel(), in_dtype<T>(c));
    });
    s.exp_avg.bump_version();
    s.exp_avg_sq.bump_version();
    finish_update(param, block);
  }
  count_step();
}

void adamw_update_elements(float* p, const float* g, float* m, float* v, int64_t n, double lr, double beta1,
                           double beta2, double eps, double weight_decay, int64_t step) {
  adamw_update<float>(p, g, m, v, n, in_dtype<float>(adam_coefficients(lr, beta1, beta2, eps, weight_decay, step)));
}

StateDict AdamW::state_dict() const {
  StateDict out = Optimizer::state_dict();
  for (size_t i = 0; i < state_.size(); ++i) {
    if (!state_[i]) continue;
    out[state_key(i, "step")] = scalar_tensor(state_[i]->step, DType::Int64);
    out[state_key(i, "exp_avg")] = kernels::clone(state_[i]->exp_avg);
    out[state_key(i, "exp_avg_sq")] = kernels::clone(state_[i]->exp_avg_sq);
  }
  return out;
}

void AdamW::load_state_dict(const StateDict& state, OptimizerSettingsOnLoad on_settings) {
  std::set<std::string> used;
  auto [steps, lr] = load_base(state, used);
  const auto taken = load_settings(state, used, on_settings);  // in settings() order
  if (taken) {
    check_adamw_settings((*taken)[0].value, (*taken)[1].value, (*taken)[2].value, (*taken)[3].value,
                         "AdamW.load_state_dict");
  }
  std::vector<std::optional<ParamState>> loaded(params().size());
  for (size_t i = 0; i < params().size(); ++i) {
    if (!has_param_state(state, i)) continue;
    ParamState s;
    const std::string step_key = state_key(i, "step");
    s.step = load_int(state, step_key, used);
    RG_CHECK(s.step >= 1, "AdamW.load_state_dict", "key '{}' holds {}, must be >= 1", step_key,
             s.step);
    s.exp_avg = load_param_like(state, state_key(i, "exp_avg"), i, used);
    s.exp_avg_sq = load_param_like(state, state_key(i, "exp_avg_sq"), i, used);
    loaded[i] = std::move(s);
  }
  check_no_unexpected(state, used);
  // Only now that everything is valid: a failed load leaves the optimizer as it was.
  state_ = std::move(loaded);
  set_step_count(steps);
  set_lr(lr);
  if (taken) {
    beta1_ = (*taken)[0].value;
    beta2_ = (*taken)[1].value;
    eps_ = (*taken)[2].value;
    weight_decay_ = (*taken)[3].value;
  }
}

// ---- gradient clipping ----------------------------------------------------------------

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  RG_CHECK(max_norm >= 0 && std::isfinite(max_norm), "clip_grad_norm_",
           "max_norm must be finite and >= 0, got {}", max_norm);
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    RG_CHECK(params[i].defined(), "clip_grad_norm_", "parameter {} is an undefined tensor", i);
    Tensor g = params[i].grad();
    if (g.defined()) grads.push_back(g);
  }
  // BEGIN EXERCISE ex13-grad-clipping
  double sum_sq = 0;
  for (const Tensor& grad : grads) {
    const Tensor g = kernels::contiguous(grad);
    dispatch_floating(g.dtype(), "clip_grad_norm_", [&](auto tag) {
      using T = decltype(tag);
      const T* d = g.data_ptr<T>();
      for (int64_t i = 0; i < g.numel(); ++i) sum_sq += static_cast<double>(d[i]) * d[i];
    });
  }
  const double norm = std::sqrt(sum_sq);
  if (norm > max_norm) {
    NoGradGuard no_grad;
    const double scale = max_norm / (norm + 1e-6);
    for (Tensor& g : grads) mul_(g, scale);
  }
  return norm;
  // END EXERCISE ex13-grad-clipping
}

}  // namespace ropegrad::nn
