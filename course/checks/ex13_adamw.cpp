// ex13-adamw: one AdamW step (nn/optim.cpp: adam_coefficients, adamw_update)
// against torch.optim.AdamW over the 1000-step problem of
// tests/fixtures/make_optim_fixtures.py: params w (6, 5), b (5), s (2, 3, 2)
// and frozen (4, never a gradient); g = curv (p - target) + noise[t % 16],
// b without a gradient when t % 7 == 3; betas (0.9, 0.95), eps 1e-8,
// weight_decay 0.1, lr from the cosine schedule (lr_max 3e-2, lr_min 3e-3,
// warmup 100, cycle 800; the fixture's adamw_<f32|f64>_lrs.npy holds each step's lr).
#include <cmath>

#include "course/checks/check_util.h"
#include "nn/optim.h"

namespace ropegrad::course {
namespace {

const std::vector<std::string> kNames = {"w", "b", "s", "frozen"};

Tensor optim_fixture(const std::string& tag, const std::string& name) {
  return load_fixture("optim/adamw_" + tag + "_" + name);
}

struct Problem {
  std::vector<Tensor> params, curv, target, noise;
  explicit Problem(const std::string& tag) {
    for (const std::string& n : kNames) {
      params.push_back(clone(optim_fixture(tag, n + "_init")).detach().requires_grad_());
      curv.push_back(optim_fixture(tag, n + "_curv"));
      target.push_back(optim_fixture(tag, n + "_target"));
      noise.push_back(optim_fixture(tag, n + "_noise"));  // (16, *shape)
    }
  }
  void set_grads(int64_t t) const {
    NoGradGuard no_grad;
    for (size_t k = 0; k < params.size(); ++k) {
      const bool skip = k == 3 || (k == 1 && t % 7 == 3);
      params[k].set_grad(skip ? Tensor() : add(mul(curv[k], sub(params[k], target[k])), select(noise[k], 0, t % 16)));
    }
  }
};

// Steps t in [0, 1000) with the fixture's schedule; at each checkpoint, params against torch.
void check_run(const std::string& tag, Tol tol) {
  Problem pb(tag);
  nn::AdamW opt(pb.params, 0.0, {0.9, 0.95}, 1e-8, 0.1);
  const Tensor frozen = clone(pb.params[3]);
  const std::vector<double> lrs = optim_fixture(tag, "lrs").to_vector<double>();
  int64_t done = 0;
  for (int64_t checkpoint : {1, 2, 10, 100, 500, 1000}) {
    for (; done < checkpoint; ++done) {
      opt.set_lr(lrs[done]);
      pb.set_grads(done);
      opt.step();
    }
    for (size_t k = 0; k < 3; ++k)
      expect_values(pb.params[k], optim_fixture(tag, kNames[k] + "_after" + std::to_string(done)), tol,
                    kNames[k] + " after " + std::to_string(done) + " steps");
    if (::testing::Test::HasFailure()) return;  // the first checkpoint that differs says enough
  }
  for (size_t k = 0; k < 3; ++k) {
    expect_values(opt.state(k)->exp_avg, optim_fixture(tag, kNames[k] + "_exp_avg"), tol, kNames[k] + " exp_avg");
    expect_values(opt.state(k)->exp_avg_sq, optim_fixture(tag, kNames[k] + "_exp_avg_sq"), {tol.rtol, tol.atol * tol.atol},
                  kNames[k] + " exp_avg_sq");
  }
  expect_values(pb.params[3], frozen, {0, 0}, "frozen (never a gradient)");
}

TEST(ex13_adamw, a_thousand_steps_match_torch_float64) { check_run("f64", {1e-12, 1e-14}); }

TEST(ex13_adamw, ten_steps_match_torch_float32) {
  // A step rounds through 6 float32 stages (the decay, the two moments, the
  // root, the quotient, the sum), K = 1: each within u of a value no larger
  // than |p| or the step's update, at most lr (|m^| <~ sqrt(v^) for these
  // steady gradients). The problem contracts (curv > 0) and m^ / sqrt(v^) is
  // invariant to a relative error in g, so errors add up over steps without
  // growing: after n steps, 6 n stages with condition |p| + sum of the n lrs.
  Problem pb("f32");
  nn::AdamW opt(pb.params, 0.0, {0.9, 0.95}, 1e-8, 0.1);
  const std::vector<double> lrs = optim_fixture("f32", "lrs").to_vector<double>();
  int64_t done = 0;
  for (int64_t checkpoint : {1, 2, 10}) {
    for (; done < checkpoint; ++done) {
      opt.set_lr(lrs[done]);
      pb.set_grads(done);
      opt.step();
    }
    double lr_sum = 0;
    for (int64_t t = 0; t < done; ++t) lr_sum += lrs[t];
    for (size_t k = 0; k < 3; ++k) {
      const Tensor want = optim_fixture("f32", kNames[k] + "_after" + std::to_string(done));
      const Tensor cond = add(abs(to(want, DType::Float64)), lr_sum);
      const auto r = within_f32_bound(pb.params[k], want, cond, {1, static_cast<int>(6 * done)});
      if (!r) {
        ADD_FAILURE() << kNames[k] << " after " << done << " steps: " << r.message();
        return;
      }
    }
  }
}

// One parameter p = 1 with gradient 2, lr 0.1, one step.
double one_step(double weight_decay) {
  Tensor p = tensor({1.0}, {1}, DType::Float64).requires_grad_();
  nn::AdamW opt({p}, 0.1, {0.9, 0.95}, 1e-8, weight_decay);
  p.set_grad(tensor({2.0}, {1}, DType::Float64));
  opt.step();
  return p.item<double>();
}

TEST(ex13_adamw, the_first_step_is_bias_corrected) {
  // m = 0.1 g and v = 0.05 g^2 after one step; divided by 1 - beta^1 they are
  // g and g^2, so p moves by lr g / (|g| + eps) = 0.1 (not 0.1 x 0.1 / sqrt(0.05) = 0.0447).
  const double got = one_step(0.0), want = 1 - 0.1 * 2 / (2 + 1e-8);
  if (std::abs(got - (1 - 0.1 * 0.1 * 2 / (std::sqrt(0.05 * 4) + 1e-8))) < 1e-9)
    ADD_FAILURE() << "bias correction missing: the first step moved p by " << 1 - got
                  << ", expected lr m / (1 - beta1) / (sqrt(v / (1 - beta2)) + eps) = " << 1 - want;
  else if (std::abs(got - want) > 1e-15)
    ADD_FAILURE() << "after one step p = " << got << ", expected " << want;
}

TEST(ex13_adamw, weight_decay_scales_p_before_the_adam_update) {
  // torch: p = p (1 - lr wd) - lr m^ / (sqrt(v^) + eps) = 0.95 - 0.1 = 0.85 with wd = 0.5;
  // decaying after the update would give (1 - 0.1) 0.95 = 0.855.
  const double adam = 0.1 * 2 / (2 + 1e-8);
  const double got = one_step(0.5), want = 1 * (1 - 0.1 * 0.5) - adam;
  if (std::abs(got - (1 - adam) * (1 - 0.1 * 0.5)) < 1e-12)
    ADD_FAILURE() << "weight decay applied after the Adam update: p = " << got
                  << " = (p - lr m^ / (sqrt(v^) + eps)) (1 - lr wd), expected p (1 - lr wd) - lr m^ / (sqrt(v^) + eps) = "
                  << want << " (torch decays p first)";
  else if (std::abs(got - want) > 1e-15)
    ADD_FAILURE() << "after one step with weight_decay 0.5, p = " << got << ", expected " << want;
}

}  // namespace
}  // namespace ropegrad::course
