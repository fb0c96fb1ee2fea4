// Training-loop pieces against PyTorch: AdamW and SGD (torch.optim), the CS336
// cosine schedule, clip_grad_norm_ and get_batch.
//
// tests/fixtures/make_optim_fixtures.py (run once with torch 1.13) wrote the
// reference values into tests/fixtures/optim/*.npy; this test needs no Python.
//
// The AdamW runs isolate the optimizer: at every step the gradient is set to
//   g = curv * (p - target) + noise[t % 16]
// which is three correctly rounded IEEE operations, so ropegrad and torch feed
// the optimizer the same bits from the same parameters; what remains is the
// optimizer itself (torch's CPU kernels use FMA in their vector paths, so
// float32 results may differ in the last bit per step, hence the tolerances).
//
// Tolerances, |actual - expected| <= atol + rtol * |expected|. The optimizers
// are elementwise (no BLAS, no reduction), so these hold on every CPU kernel:
// one float32 step is about 10 rounded operations per element, each within
// u = 2^-24 relative (6e-7 per step when FMA rounds differently), and the
// update is normalised by sqrt(v), so per-step differences do not compound:
// over the 1000 steps they stay below 1e-5 relative.
//   AdamW float32  rtol 1e-5,  atol 1e-6  (the atol only matters for entries near 0)
//   AdamW float64  rtol 1e-12, atol 1e-14
//   SGD   float32  rtol 1e-6,  atol 1e-7 (5 steps of <= 4 rounded ops: 20 u = 1.2e-6);
//                  float64 rtol 1e-14, atol 1e-15
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tasks/batch.h"
#include "nn/module.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "io/npy.h"
#include "io/token_memmap.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

Tensor fixture(const std::string& name) { return load_fixture("optim/" + name); }

void expect_bitwise_equal(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  const std::vector<double> a = actual.to_vector<double>();  // float32 -> double is exact
  const std::vector<double> e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::memcmp(&a[i], &e[i], sizeof(double)), 0)
        << what << ": element " << i << " is " << a[i] << ", expected " << e[i];
  }
}

// ---- the AdamW problem of make_optim_fixtures.py ----------------------------------------

const std::vector<std::string> kAdamNames = {"w", "b", "s", "frozen"};
constexpr int64_t kNoisePeriod = 16;
constexpr double kLrMax = 3e-2, kLrMin = 3e-3;
constexpr int64_t kWarmup = 100, kCycle = 800;

// Four parameters, as registered by a model: w (6, 5), b (5,), s (2, 3, 2), frozen (4,).
struct TinyModel : nn::Module {
  std::string type_name() const override { return "TinyModel"; }
  explicit TinyModel(const std::string& tag) {
    for (const std::string& name : kAdamNames)
      register_parameter(name, fixture("adamw_" + tag + "_" + name + "_init"));
  }
};

struct AdamProblem {
  std::vector<Tensor> curv, target, noise;  // per parameter, in kAdamNames order
  explicit AdamProblem(const std::string& tag) {
    for (const std::string& name : kAdamNames) {
      curv.push_back(fixture("adamw_" + tag + "_" + name + "_curv"));
      target.push_back(fixture("adamw_" + tag + "_" + name + "_target"));
      noise.push_back(fixture("adamw_" + tag + "_" + name + "_noise"));  // (16, *shape)
    }
  }
  // Sets the gradients of step t: `b` (index 1) gets none when t % 7 == 3,
  // `frozen` (index 3) never gets one.
  void set_grads(const std::vector<Tensor>& params, int64_t t) const {
    NoGradGuard no_grad;
    for (size_t k = 0; k < params.size(); ++k) {
      const bool skip = k == 3 || (k == 1 && t % 7 == 3);
      params[k].set_grad(skip ? Tensor()
                              : add(mul(curv[k], sub(params[k], target[k])),
                                    select(noise[k], 0, t % kNoisePeriod)));
    }
  }
};

// Steps t in [t0, t1) of the fixture's run.
void run_adamw(nn::AdamW& opt, const AdamProblem& problem, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    opt.set_lr(nn::cosine_lr(t, kLrMax, kLrMin, kWarmup, kCycle));
    problem.set_grads(opt.params(), t);
    opt.step();
  }
}

nn::AdamW make_adamw(const std::vector<Tensor>& params) {
  return nn::AdamW(params, {.lr = 0.0, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
}

void check_adamw_against_torch(const std::string& tag, double rtol, double atol) {
  TinyModel model(tag);
  const AdamProblem problem(tag);
  const std::vector<Tensor> params = model.parameters();
  ASSERT_EQ(params.size(), 4u);
  const Tensor frozen_before = kernels::clone(params[3]);
  nn::AdamW opt = make_adamw(params);

  // The schedule the fixture used, step by step (the same formula in double).
  const std::vector<double> lrs = fixture("adamw_" + tag + "_lrs").to_vector<double>();
  ASSERT_EQ(lrs.size(), 1000u);
  for (int64_t t = 0; t < 1000; ++t)
    ASSERT_DOUBLE_EQ(nn::cosine_lr(t, kLrMax, kLrMin, kWarmup, kCycle), lrs[t]) << "t = " << t;

  int64_t done = 0;
  for (int64_t checkpoint : {1, 2, 10, 100, 500, 1000}) {
    run_adamw(opt, problem, done, checkpoint);
    done = checkpoint;
    for (size_t k = 0; k < 3; ++k) {
      const std::string name =
          "adamw_" + tag + "_" + kAdamNames[k] + "_after" + std::to_string(done);
      expect_close(params[k], fixture(name), rtol, atol, name);
    }
  }
  EXPECT_EQ(opt.step_count(), 1000);
  for (size_t k = 0; k < 3; ++k) {
    const std::string prefix = "adamw_" + tag + "_" + kAdamNames[k];
    ASSERT_TRUE(opt.state(k).has_value()) << prefix;
    // b missed the 143 steps with t % 7 == 3: its bias correction uses 857.
    EXPECT_EQ(opt.state(k)->step, fixture(prefix + "_step").item<int64_t>()) << prefix;
    expect_close(opt.state(k)->exp_avg, fixture(prefix + "_exp_avg"), rtol, atol,
                 prefix + " exp_avg");
    expect_close(opt.state(k)->exp_avg_sq, fixture(prefix + "_exp_avg_sq"), rtol, atol * atol,
                 prefix + " exp_avg_sq");
  }
  EXPECT_EQ(opt.state(1)->step, 1000 - 143);
  // A parameter that never had a gradient is untouched and has no state (as torch).
  EXPECT_FALSE(opt.state(3).has_value());
  expect_bitwise_equal(params[3], frozen_before, "frozen");
}

}  // namespace

// ---- AdamW against torch.optim.AdamW --------------------------------------------------

TEST(AdamW, ThousandStepsFloat32MatchTorch) { check_adamw_against_torch("f32", 1e-5, 1e-6); }

TEST(AdamW, ThousandStepsFloat64MatchTorch) { check_adamw_against_torch("f64", 1e-12, 1e-14); }

TEST(AdamW, FirstStepByHand) {
  // One element, p = 1, g = 0.5, lr 0.1, wd 0.1, betas (0.9, 0.999), eps 1e-8:
  // p *= 1 - 0.01 -> 0.99; m = 0.05, v = 0.00025; m_hat = 0.5, sqrt(v_hat) = 0.5;
  // p = 0.99 - 0.1 * 0.5 / (0.5 + 1e-8).
  Tensor p = tensor({1.0}, DType::Float64).requires_grad_();
  nn::AdamW opt({p}, {.lr = 0.1, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.1});
  p.set_grad(tensor({0.5}, DType::Float64));
  opt.step();
  EXPECT_NEAR(p.item(), 0.99 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-15);
  EXPECT_NEAR(opt.state(0)->exp_avg.item(), 0.05, 1e-16);
  EXPECT_NEAR(opt.state(0)->exp_avg_sq.item(), 0.00025, 1e-17);
  EXPECT_EQ(opt.state(0)->step, 1);
}

TEST(AdamW, EpsIsAddedAfterTheSquareRoot) {
  // A tiny gradient g = 1e-8 (lr 0.1, wd 0): m_hat = 1e-8 and sqrt(v_hat) = 1e-8, so
  // p = -0.1 * 1e-8 / (1e-8 + eps) = -0.05 with eps = 1e-8. (eps inside the square
  // root would give about -1e-5.)
  Tensor p = tensor({0.0}, DType::Float64).requires_grad_();
  nn::AdamW opt({p}, {.lr = 0.1, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.0});
  p.set_grad(tensor({1e-8}, DType::Float64));
  opt.step();
  EXPECT_NEAR(p.item(), -0.05, 1e-12);
}

TEST(AdamW, DefaultsAreTorchs) {
  Tensor p = zeros({2}).requires_grad_();
  nn::AdamW opt({p});
  EXPECT_EQ(opt.lr(), 1e-3);
  EXPECT_EQ(opt.betas().first, 0.9);
  EXPECT_EQ(opt.betas().second, 0.999);
  EXPECT_EQ(opt.eps(), 1e-8);
  EXPECT_EQ(opt.weight_decay(), 0.01);
}

TEST(AdamW, StepBumpsTheParameterVersionSoSavedTensorsNotice) {
  // y = p * p saves p; updating p before backward must make backward fail.
  Tensor p = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = sum(mul(p, p));
  p.set_grad(ones({2}));
  nn::AdamW opt({p}, {.lr = 0.1});
  const uint64_t before = p.version();
  opt.step();
  EXPECT_GT(p.version(), before);
  EXPECT_THROW(backward(y), Error);
}

TEST(AdamW, UpdatesANonContiguousParameterInPlace) {
  // A transposed view as the parameter: the update lands in its storage.
  Tensor base = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64);
  Tensor pt = transpose(base, 0, 1);  // (3, 2), strides (1, 3)
  pt.requires_grad_();
  Tensor reference = kernels::clone(pt).requires_grad_();
  nn::AdamW a({pt}, {.lr = 0.1}), b({reference}, {.lr = 0.1});
  const Tensor g = tensor({0.5, -1, 2, 0.25, -3, 1}, {3, 2}, DType::Float64);
  pt.set_grad(g);
  reference.set_grad(g);
  a.step();
  b.step();
  expect_bitwise_equal(pt, reference, "transposed parameter");
  expect_bitwise_equal(transpose(base, 0, 1), reference, "its storage");
}

TEST(AdamW, ZeroGradDropsGradients) {
  Tensor p = ones({3}).requires_grad_();
  nn::AdamW opt({p});
  p.set_grad(ones({3}));
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // nothing has a grad: nothing changes, no state
  EXPECT_FALSE(opt.state(0).has_value());
  EXPECT_EQ(p.to_vector<double>(), std::vector<double>({1, 1, 1}));
}

// ---- AdamW state_dict: an interrupted run equals an uninterrupted one ---------------------

TEST(AdamWState, SaveLoadResumeIsBitIdentical) {
  const AdamProblem problem("f32");
  // Uninterrupted: 600 steps.
  TinyModel straight("f32");
  nn::AdamW straight_opt = make_adamw(straight.parameters());
  run_adamw(straight_opt, problem, 0, 600);

  // Interrupted: 300 steps, save, a fresh model and optimizer load, 300 more.
  TinyModel first("f32");
  nn::AdamW first_opt = make_adamw(first.parameters());
  run_adamw(first_opt, problem, 0, 300);
  nn::StateDict model_state = first.state_dict();  // views of the live parameters: copy
  for (auto& [name, value] : model_state) value = kernels::clone(value);
  const nn::StateDict opt_state = first_opt.state_dict();

  // The keys: step, lr and the settings, then per parameter with state (not `frozen`, index 3).
  std::set<std::string> keys;
  for (const auto& [key, value] : opt_state) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"lr", "step", "settings.beta1", "settings.beta2", "settings.eps",
                                         "settings.weight_decay", "state.0.exp_avg", "state.0.exp_avg_sq",
                                         "state.0.step", "state.1.exp_avg", "state.1.exp_avg_sq",
                                         "state.1.step", "state.2.exp_avg", "state.2.exp_avg_sq",
                                         "state.2.step"}));
  EXPECT_EQ(opt_state.at("step").dtype(), DType::Int64);
  EXPECT_EQ(opt_state.at("step").dim(), 0);
  EXPECT_EQ(opt_state.at("step").item<int64_t>(), 300);
  EXPECT_EQ(opt_state.at("state.0.step").item<int64_t>(), 300);
  EXPECT_EQ(opt_state.at("state.1.step").item<int64_t>(), 300 - 43);  // 43 t's with t % 7 == 3
  EXPECT_EQ(opt_state.at("lr").item<double>(), nn::cosine_lr(299, kLrMax, kLrMin, kWarmup, kCycle));

  // The state dict is a snapshot: stepping the optimizer on does not change it.
  const Tensor saved_m = kernels::clone(opt_state.at("state.0.exp_avg"));
  run_adamw(first_opt, problem, 300, 310);
  expect_bitwise_equal(opt_state.at("state.0.exp_avg"), saved_m, "snapshot");

  TinyModel resumed("f32");
  resumed.load_state_dict(model_state);
  nn::AdamW resumed_opt = make_adamw(resumed.parameters());
  resumed_opt.load_state_dict(opt_state);
  EXPECT_EQ(resumed_opt.step_count(), 300);
  EXPECT_EQ(resumed_opt.lr(), opt_state.at("lr").item<double>());
  run_adamw(resumed_opt, problem, 300, 600);

  const std::vector<Tensor> a = straight.parameters(), b = resumed.parameters();
  for (size_t k = 0; k < a.size(); ++k) expect_bitwise_equal(b[k], a[k], "param " + kAdamNames[k]);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(resumed_opt.state(k)->step, straight_opt.state(k)->step);
    expect_bitwise_equal(resumed_opt.state(k)->exp_avg, straight_opt.state(k)->exp_avg, "exp_avg");
    expect_bitwise_equal(resumed_opt.state(k)->exp_avg_sq, straight_opt.state(k)->exp_avg_sq,
                         "exp_avg_sq");
  }
  EXPECT_FALSE(resumed_opt.state(3).has_value());
  EXPECT_EQ(resumed_opt.step_count(), 600);
}

TEST(AdamWState, LoadCopiesTheTensors) {
  Tensor p = ones({2}).requires_grad_();
  nn::AdamW opt({p}, {.lr = 0.1});
  p.set_grad(ones({2}));
  opt.step();
  nn::StateDict state = opt.state_dict();
  Tensor q = ones({2}).requires_grad_();
  nn::AdamW other({q}, {.lr = 0.1});
  other.load_state_dict(state);
  fill_(state.at("state.0.exp_avg"), 123.0);  // editing the dict afterwards changes nothing
  EXPECT_NEAR(other.state(0)->exp_avg.at({0}), 0.1, 1e-7);
}

TEST(AdamWState, LoadCastsStateToTheParameterDtype) {
  // A float64 state loaded into a float32 optimizer is cast, as torch does.
  Tensor p = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW opt64({p}, {.lr = 0.1});
  p.set_grad(tensor({0.5, 0.25}, DType::Float64));
  opt64.step();
  Tensor q = ones({2}).requires_grad_();
  nn::AdamW opt32({q}, {.lr = 0.1});
  opt32.load_state_dict(opt64.state_dict());
  EXPECT_EQ(opt32.state(0)->exp_avg.dtype(), DType::Float32);
  EXPECT_EQ(opt32.state(0)->exp_avg.to_vector<double>(),
            std::vector<double>({static_cast<float>(0.05), static_cast<float>(0.025)}));
}

TEST(AdamWState, BadStateDictsNameTheKeyAndLeaveTheOptimizerAlone) {
  Tensor p = ones({2, 3}).requires_grad_();
  Tensor p2 = ones({4}).requires_grad_();
  nn::AdamW source({p, p2}, {.lr = 0.1});
  p.set_grad(ones({2, 3}));
  p2.set_grad(ones({4}));
  source.step();
  const nn::StateDict good = source.state_dict();

  Tensor q = ones({2, 3}).requires_grad_();
  Tensor q2 = ones({4}).requires_grad_();
  nn::AdamW target({q, q2}, {.lr = 0.5});
  auto load_with = [&](const std::function<void(nn::StateDict&)>& edit) {
    nn::StateDict bad = good;
    edit(bad);
    return error_of([&] { target.load_state_dict(bad); });
  };

  std::string msg = load_with([](nn::StateDict& s) { s.erase("state.1.exp_avg_sq"); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("missing"),
                         HasSubstr("'state.1.exp_avg_sq'")));
  msg = load_with([](nn::StateDict& s) { s.erase("step"); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'step'")));
  msg = load_with([](nn::StateDict& s) { s.erase("lr"); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'lr'")));
  msg = load_with([](nn::StateDict& s) { s["state.0.exp_avg"] = zeros({3, 2}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'state.0.exp_avg'"),
                         HasSubstr("[3, 2]"), HasSubstr("[2, 3]")));
  msg = load_with([](nn::StateDict& s) { s["step"] = scalar_tensor(1.0, DType::Float32); });
  EXPECT_THAT(msg,
              AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'step'"), HasSubstr("float32")));
  msg = load_with([](nn::StateDict& s) { s["state.0.step"] = scalar_tensor(0, DType::Int64); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'state.0.step'")));
  msg = load_with([](nn::StateDict& s) { s["state.2.exp_avg"] = zeros({4}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("unexpected"),
                         HasSubstr("'state.2.exp_avg'")));
  msg = load_with([](nn::StateDict& s) { s["momentum"] = zeros({1}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("'momentum'")));
  // None of the failed loads changed anything.
  EXPECT_FALSE(target.state(0).has_value());
  EXPECT_FALSE(target.state(1).has_value());
  EXPECT_EQ(target.lr(), 0.5);
  EXPECT_EQ(target.step_count(), 0);
}

// ---- settings: named, saved, compared on load -------------------------------------------

// Options are given by name only: positional braces, where a number meant as
// one setting would land in another, do not compile.
template <typename Options, typename... Args>
concept BracedFrom = requires(Args... args) { Options{args...}; };
static_assert(BracedFrom<nn::AdamWOptions>, "the defaults");
static_assert(!BracedFrom<nn::AdamWOptions, double>, "AdamWOptions{1e-3}");
static_assert(!BracedFrom<nn::AdamWOptions, double, std::pair<double, double>, double>,
              "AdamWOptions{1e-3, {0.9, 0.999}, 0.01}: 0.01 would be eps");
static_assert(!BracedFrom<nn::SGDOptions, double, double>, "SGDOptions{0.1, 0.9}");

// An AdamW over one parameter (2,) after one step, with these options.
struct SteppedAdamW {
  Tensor p = tensor({1.0, -2.0}, DType::Float64).requires_grad_();
  nn::AdamW opt;
  explicit SteppedAdamW(nn::AdamWOptions o) : opt({p}, o) {
    p.set_grad(tensor({0.5, 0.25}, DType::Float64));
    opt.step();
  }
};

TEST(OptimizerSettings, TheStateDictHoldsEachSetting) {
  SteppedAdamW a({.lr = 0.1, .betas = {0.8, 0.95}, .eps = 1e-6, .weight_decay = 0.2});
  const nn::StateDict state = a.opt.state_dict();
  EXPECT_EQ(state.at("settings.beta1").item<double>(), 0.8);
  EXPECT_EQ(state.at("settings.beta2").item<double>(), 0.95);
  EXPECT_EQ(state.at("settings.eps").item<double>(), 1e-6);
  EXPECT_EQ(state.at("settings.weight_decay").item<double>(), 0.2);
  EXPECT_EQ(state.at("settings.eps").dtype(), DType::Float64);
  Tensor q = zeros({1}).requires_grad_();
  nn::SGD sgd({q}, {.lr = 0.1, .momentum = 0.9, .dampening = 0, .weight_decay = 0.01, .nesterov = true});
  const nn::StateDict sgd_state = sgd.state_dict();
  EXPECT_EQ(sgd_state.at("settings.momentum").item<double>(), 0.9);
  EXPECT_EQ(sgd_state.at("settings.dampening").item<double>(), 0.0);
  EXPECT_EQ(sgd_state.at("settings.weight_decay").item<double>(), 0.01);
  EXPECT_EQ(sgd_state.at("settings.nesterov").item<double>(), 1.0);
}

TEST(OptimizerSettings, LoadingIntoOtherSettingsIsAnErrorNamingEachSavedAndGiven) {
  SteppedAdamW saved({.lr = 0.1, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
  Tensor q = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW mine({q}, {.lr = 0.5});  // betas (0.9, 0.999), weight_decay 0.01
  const std::string msg = error_of([&] { mine.load_state_dict(saved.opt.state_dict()); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("beta2 saved 0.95, this optimizer 0.999"),
                         HasSubstr("weight_decay saved 0.1, this optimizer 0.01"), HasSubstr("keep_mine"),
                         HasSubstr("take_saved")));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("beta1 saved")));  // equal: not listed
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("eps saved")));
  EXPECT_FALSE(mine.state(0).has_value()) << "a refused load changes nothing";
  EXPECT_EQ(mine.step_count(), 0);
  EXPECT_EQ(mine.lr(), 0.5);
}

TEST(OptimizerSettings, KeepMineLoadsTheStateAndKeepsTheSettings) {
  SteppedAdamW saved({.lr = 0.1, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
  Tensor q = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW mine({q}, {.lr = 0.5, .betas = {0.8, 0.99}, .eps = 1e-7, .weight_decay = 0.3});
  mine.load_state_dict(saved.opt.state_dict(), nn::OptimizerSettingsOnLoad::keep_mine);
  EXPECT_EQ(mine.betas(), std::make_pair(0.8, 0.99));
  EXPECT_EQ(mine.eps(), 1e-7);
  EXPECT_EQ(mine.weight_decay(), 0.3);
  ASSERT_TRUE(mine.state(0).has_value());
  expect_bitwise_equal(mine.state(0)->exp_avg, saved.opt.state(0)->exp_avg, "exp_avg");
  EXPECT_EQ(mine.step_count(), 1);
  EXPECT_EQ(mine.lr(), 0.1);  // the state's learning rate, as always
}

TEST(OptimizerSettings, TakeSavedAdoptsTheSettingsAndStepsAsTheSavedOptimizer) {
  SteppedAdamW saved({.lr = 0.1, .betas = {0.5, 0.75}, .eps = 1e-3, .weight_decay = 0.25});
  Tensor q = kernels::clone(saved.p.detach()).requires_grad_();
  nn::AdamW mine({q}, {.lr = 0.5});
  mine.load_state_dict(saved.opt.state_dict(), nn::OptimizerSettingsOnLoad::take_saved);
  EXPECT_EQ(mine.betas(), std::make_pair(0.5, 0.75));
  EXPECT_EQ(mine.eps(), 1e-3);
  EXPECT_EQ(mine.weight_decay(), 0.25);
  // The next step is the saved optimizer's, bit for bit.
  const Tensor g = tensor({-1.0, 2.0}, DType::Float64);
  saved.p.set_grad(kernels::clone(g));
  saved.opt.step();
  q.set_grad(kernels::clone(g));
  mine.step();
  expect_bitwise_equal(q, saved.p, "parameter after the adopted settings' step");
}

TEST(OptimizerSettings, TakeSavedChecksTheSavedValues) {
  SteppedAdamW saved({});
  nn::StateDict state = saved.opt.state_dict();
  state["settings.beta1"] = scalar_tensor(1.5, DType::Float64);
  Tensor q = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW mine({q}, {.lr = 0.5});
  const std::string msg =
      error_of([&] { mine.load_state_dict(state, nn::OptimizerSettingsOnLoad::take_saved); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("index 0"), HasSubstr("1.5")));
  EXPECT_EQ(mine.betas().first, 0.9);
  EXPECT_FALSE(mine.state(0).has_value());
}

TEST(OptimizerSettings, AStateWithoutSettingsLoadsAndKeepsTheOptimizersOwn) {
  // A state dict (or checkpoint) written before the settings were saved.
  SteppedAdamW saved({.lr = 0.1, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
  nn::StateDict state = saved.opt.state_dict();
  for (const char* name : {"beta1", "beta2", "eps", "weight_decay"}) state.erase(std::string("settings.") + name);
  Tensor q = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW mine({q}, {.lr = 0.5});
  mine.load_state_dict(state);  // nothing to compare: loads
  EXPECT_EQ(mine.betas(), std::make_pair(0.9, 0.999));
  EXPECT_EQ(mine.weight_decay(), 0.01);
  EXPECT_EQ(mine.step_count(), 1);
  mine.load_state_dict(state, nn::OptimizerSettingsOnLoad::take_saved);  // nothing to take
  EXPECT_EQ(mine.betas(), std::make_pair(0.9, 0.999));
}

TEST(OptimizerSettings, BadSettingEntriesNameTheKey) {
  SteppedAdamW saved({});
  Tensor q = ones({2}, DType::Float64).requires_grad_();
  nn::AdamW mine({q});
  nn::StateDict some = saved.opt.state_dict();
  some.erase("settings.eps");
  EXPECT_THAT(error_of([&] { mine.load_state_dict(some); }),
              AllOf(HasSubstr("AdamW.load_state_dict"), HasSubstr("missing key 'settings.eps'"),
                    HasSubstr("some settings but not all")));
  nn::StateDict wrong_dtype = saved.opt.state_dict();
  wrong_dtype["settings.beta2"] = scalar_tensor(int64_t{1}, DType::Int64);
  EXPECT_THAT(error_of([&] { mine.load_state_dict(wrong_dtype); }),
              AllOf(HasSubstr("'settings.beta2'"), HasSubstr("floating")));
  nn::StateDict unknown = saved.opt.state_dict();
  unknown["settings.amsgrad"] = scalar_tensor(1.0, DType::Float64);
  EXPECT_THAT(error_of([&] { mine.load_state_dict(unknown); }),
              AllOf(HasSubstr("unexpected key 'settings.amsgrad'")));
  EXPECT_FALSE(mine.state(0).has_value());
}

TEST(OptimizerSettings, SGDComparesAndAdoptsItsSettings) {
  Tensor a = tensor({1.0, 2.0}, DType::Float64).requires_grad_();
  nn::SGD saved({a}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  a.set_grad(tensor({0.5, -1.0}, DType::Float64));
  saved.step();
  Tensor b = tensor({1.0, 2.0}, DType::Float64).requires_grad_();
  nn::SGD mine({b}, {.lr = 0.1, .momentum = 0.5, .nesterov = true});
  EXPECT_THAT(error_of([&] { mine.load_state_dict(saved.state_dict()); }),
              AllOf(HasSubstr("SGD.load_state_dict"), HasSubstr("momentum saved 0.9, this optimizer 0.5"),
                    HasSubstr("weight_decay saved 0.01, this optimizer 0"),
                    HasSubstr("nesterov saved 0, this optimizer 1")));
  mine.load_state_dict(saved.state_dict(), nn::OptimizerSettingsOnLoad::take_saved);
  EXPECT_EQ(mine.momentum(), 0.9);
  EXPECT_EQ(mine.weight_decay(), 0.01);
  nn::StateDict bad = saved.state_dict();
  bad["settings.nesterov"] = scalar_tensor(0.5, DType::Float64);
  EXPECT_THAT(error_of([&] { mine.load_state_dict(bad, nn::OptimizerSettingsOnLoad::take_saved); }),
              AllOf(HasSubstr("SGD.load_state_dict"), HasSubstr("'settings.nesterov' holds 0.5")));
}

// ---- SGD against torch.optim.SGD --------------------------------------------------------

namespace {

struct SgdConfig {
  std::string name;
  double lr, momentum, weight_decay, dampening;
  bool nesterov;
};

const std::vector<SgdConfig> kSgdConfigs = {
    {"plain", 0.1, 0, 0, 0, false},
    {"momentum", 0.05, 0.9, 0, 0, false},
    {"momentum_wd_damp", 0.05, 0.8, 0.01, 0.25, false},
    {"nesterov_wd", 0.02, 0.9, 0.05, 0, true},
};

}  // namespace

TEST(SGD, FiveStepsMatchTorchForEveryConfiguration) {
  for (const SgdConfig& cfg : kSgdConfigs) {
    for (const std::string tag : {"f32", "f64"}) {
      const std::string prefix = "sgd_" + cfg.name + "_" + tag;
      const double rtol = tag == "f32" ? 1e-6 : 1e-14, atol = tag == "f32" ? 1e-7 : 1e-15;
      Tensor p = fixture(prefix + "_init").requires_grad_();  // (3, 4)
      const Tensor grads = fixture(prefix + "_grads");        // (5, 3, 4)
      const Tensor traj = fixture(prefix + "_traj");          // (5, 3, 4): p after step k + 1
      nn::SGD opt({p}, {.lr = cfg.lr, .momentum = cfg.momentum, .dampening = cfg.dampening, .weight_decay = cfg.weight_decay, .nesterov = cfg.nesterov});
      for (int64_t k = 0; k < 5; ++k) {
        p.set_grad(kernels::clone(select(grads, 0, k)));
        opt.step();
        expect_close(p, select(traj, 0, k), rtol, atol, prefix + " step " + std::to_string(k + 1));
      }
      EXPECT_EQ(opt.momentum_buffer(0).defined(), cfg.momentum != 0) << prefix;
    }
  }
}

TEST(SGD, PlainStepByHand) {
  // p = [1, -2], g = [0.5, 4], lr 0.25, weight_decay 0.5:
  // d = g + 0.5 p = [1, 3]; p - 0.25 d = [0.75, -2.75]. Exact in binary.
  Tensor p = tensor({1, -2}, DType::Float64).requires_grad_();
  nn::SGD opt({p}, {.lr = 0.25, .momentum = 0, .weight_decay = 0.5});
  p.set_grad(tensor({0.5, 4}, DType::Float64));
  opt.step();
  EXPECT_EQ(p.to_vector<double>(), std::vector<double>({0.75, -2.75}));
}

TEST(SGD, MomentumStateRoundTrip) {
  Tensor a = tensor({1, 2, 3}, DType::Float64).requires_grad_();
  Tensor b = tensor({1, 2, 3}, DType::Float64).requires_grad_();
  nn::SGD straight({a}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  nn::SGD first({b}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  const Tensor g = tensor({0.5, -1, 0.25}, DType::Float64);
  for (int i = 0; i < 3; ++i) {
    a.set_grad(kernels::clone(g));
    straight.step();
    b.set_grad(kernels::clone(g));
    first.step();
  }
  const nn::StateDict state = first.state_dict();
  EXPECT_EQ(state.count("state.0.momentum_buffer"), 1u);
  EXPECT_EQ(state.at("step").item<int64_t>(), 3);
  nn::SGD resumed({b}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  resumed.load_state_dict(state);
  for (int i = 0; i < 3; ++i) {
    a.set_grad(kernels::clone(g));
    straight.step();
    b.set_grad(kernels::clone(g));
    resumed.step();
  }
  expect_bitwise_equal(b, a, "resumed SGD");
  expect_bitwise_equal(resumed.momentum_buffer(0), straight.momentum_buffer(0), "momentum buffer");
}

// ---- cosine schedule ------------------------------------------------------------------------

TEST(CosineLr, MatchesTheFormulaAtManyT) {
  const Tensor rows = fixture("cosine");  // (N, 6): t, lr_max, lr_min, warmup, cycle, lr
  ASSERT_EQ(rows.dim(), 2);
  ASSERT_GT(rows.size(0), 50);
  for (int64_t i = 0; i < rows.size(0); ++i) {
    const auto t = static_cast<int64_t>(rows.at<double>({i, 0}));
    const double lr_max = rows.at<double>({i, 1}), lr_min = rows.at<double>({i, 2});
    const auto warmup = static_cast<int64_t>(rows.at<double>({i, 3}));
    const auto cycle = static_cast<int64_t>(rows.at<double>({i, 4}));
    EXPECT_DOUBLE_EQ(nn::cosine_lr(t, lr_max, lr_min, warmup, cycle), rows.at<double>({i, 5}))
        << "t " << t << " lr_max " << lr_max << " lr_min " << lr_min << " warmup " << warmup
        << " cycle " << cycle;
  }
}

TEST(CosineLr, CS336ReferenceValues) {
  // CS336's test_get_lr_cosine_schedule: lr_max 1, lr_min 0.1, warmup 7, cycle 21.
  const std::vector<double> expected = {0,
                                        0.14285714285714285,
                                        0.2857142857142857,
                                        0.42857142857142855,
                                        0.5714285714285714,
                                        0.7142857142857143,
                                        0.8571428571428571,
                                        1.0,
                                        0.9887175604818206,
                                        0.9554359905560885,
                                        0.9018241671106134,
                                        0.8305704108364301,
                                        0.7452476826029011,
                                        0.6501344202803414,
                                        0.55,
                                        0.44986557971965857,
                                        0.3547523173970989,
                                        0.26942958916356996,
                                        0.19817583288938662,
                                        0.14456400944391146,
                                        0.11128243951817937,
                                        0.1,
                                        0.1,
                                        0.1,
                                        0.1};
  for (size_t t = 0; t < expected.size(); ++t)
    EXPECT_NEAR(nn::cosine_lr(static_cast<int64_t>(t), 1.0, 0.1, 7, 21), expected[t], 1e-12)
        << "t = " << t;
  // The three regimes by hand: mid-warmup, the middle of the cosine, after the cycle.
  EXPECT_DOUBLE_EQ(nn::cosine_lr(5, 1e-3, 1e-4, 10, 110), 5e-4);
  EXPECT_DOUBLE_EQ(nn::cosine_lr(60, 1e-3, 1e-4, 10, 110), 1e-4 + 0.5 * (1e-3 - 1e-4));
  EXPECT_EQ(nn::cosine_lr(111, 1e-3, 1e-4, 10, 110), 1e-4);
}

TEST(CosineLr, BadArgumentsNameTheFunctionAndTheValue) {
  std::string msg = error_of([] { nn::cosine_lr(-3, 1, 0.1, 7, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("-3")));
  msg = error_of([] { nn::cosine_lr(0, -1.5, 0, 7, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("lr_max"), HasSubstr("-1.5")));
  msg = error_of([] { nn::cosine_lr(0, 1, -0.25, 7, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("lr_min"), HasSubstr("-0.25")));
  msg = error_of([] { nn::cosine_lr(0, 1, 2.5, 7, 21); });  // lr_min > lr_max: swapped?
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("lr_min"), HasSubstr("2.5")));
  msg = error_of([] { nn::cosine_lr(0, std::nan(""), 0, 7, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("nan")));
  msg = error_of([] { nn::cosine_lr(0, 1, 0.1, -7, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("warmup_iters"), HasSubstr("-7")));
  msg = error_of([] { nn::cosine_lr(0, 1, 0.1, 30, 21); });
  EXPECT_THAT(msg, AllOf(HasSubstr("cosine_lr"), HasSubstr("cosine_cycle_iters"), HasSubstr("21"),
                         HasSubstr("30")));
}

// ---- clip_grad_norm_ against torch.nn.utils.clip_grad_norm_ -------------------------------------

TEST(ClipGradNorm, MatchesTorchAboveAndBelowMaxNorm) {
  const std::vector<Shape> shapes = {{3, 4}, {5}, {2, 2, 2}};
  for (const std::string tag : {"f32", "f64"}) {
    const DType dtype = tag == "f32" ? DType::Float32 : DType::Float64;
    const double rtol = tag == "f32" ? 1e-6 : 1e-13;
    for (const std::string c : {"above", "below"}) {
      const std::string prefix = "clip_" + tag + "_" + c;
      // (torch's returned norm, the exact norm in float64, max_norm)
      const std::vector<double> norm = fixture(prefix + "_norm").to_vector<double>();
      std::vector<Tensor> params;
      for (size_t i = 0; i < shapes.size(); ++i) {
        params.push_back(zeros(shapes[i], dtype).requires_grad_());
        params.back().set_grad(fixture(prefix + "_g" + std::to_string(i) + "_in"));
      }
      params.push_back(zeros({2}, dtype).requires_grad_());  // no grad: ignored
      const double returned = nn::clip_grad_norm_(params, norm[2]);
      EXPECT_NEAR(returned, norm[1], 1e-12 * norm[1]) << prefix << " (exact norm)";
      EXPECT_NEAR(returned, norm[0], rtol * norm[0]) << prefix << " (torch's norm)";
      for (size_t i = 0; i < shapes.size(); ++i) {
        const std::string name = prefix + "_g" + std::to_string(i) + "_out";
        if (c == "below")  // unchanged, bit for bit
          expect_bitwise_equal(params[i].grad(), fixture(name), name);
        else
          expect_close(params[i].grad(), fixture(name), rtol, 0, name);
      }
      EXPECT_FALSE(params.back().grad().defined());
    }
  }
}

TEST(ClipGradNorm, ByHand) {
  // grads (3, 4) and (0,): norm 5; max_norm 1 scales by 1 / (5 + 1e-6).
  Tensor a = zeros({2}, DType::Float64).requires_grad_();
  Tensor b = zeros({1}, DType::Float64).requires_grad_();
  a.set_grad(tensor({3, 4}, DType::Float64));
  b.set_grad(tensor({0}, DType::Float64));
  EXPECT_EQ(nn::clip_grad_norm_({a, b}, 1.0), 5.0);
  EXPECT_NEAR(a.grad().at({0}), 3 / (5 + 1e-6), 1e-15);
  EXPECT_NEAR(a.grad().at({1}), 4 / (5 + 1e-6), 1e-15);
  EXPECT_EQ(b.grad().at({0}), 0.0);
  // Already within max_norm: returned, not scaled.
  a.set_grad(tensor({3, 4}, DType::Float64));
  EXPECT_EQ(nn::clip_grad_norm_({a}, 5.0), 5.0);
  EXPECT_EQ(a.grad().to_vector<double>(), std::vector<double>({3, 4}));
  // No gradients at all: norm 0 (torch returns tensor(0.)).
  Tensor c = zeros({3}).requires_grad_();
  EXPECT_EQ(nn::clip_grad_norm_({c}, 1.0), 0.0);
  EXPECT_EQ(nn::clip_grad_norm_({}, 1.0), 0.0);
}

TEST(ClipGradNorm, BadMaxNorm) {
  Tensor a = zeros({2}).requires_grad_();
  std::string msg = error_of([&] { nn::clip_grad_norm_({a}, -1.5); });
  EXPECT_THAT(msg, AllOf(HasSubstr("clip_grad_norm_"), HasSubstr("max_norm"), HasSubstr("-1.5")));
  msg = error_of([&] { nn::clip_grad_norm_({a}, std::nan("")); });
  EXPECT_THAT(msg, AllOf(HasSubstr("clip_grad_norm_"), HasSubstr("nan")));
  msg = error_of([&] { nn::clip_grad_norm_({a, Tensor()}, 1.0); });
  EXPECT_THAT(msg, AllOf(HasSubstr("clip_grad_norm_"), HasSubstr("parameter 1")));
}

// ---- get_batch --------------------------------------------------------------------------------

TEST(GetBatch, ShapesShiftAndOffsets) {
  const Tensor tokens = arange(100);  // token i is i: x[b, 0] is the start offset
  Generator gen(42);
  auto [x, y] = nn::get_batch(tokens, /*batch_size=*/64, /*context_length=*/8, gen);
  EXPECT_EQ(x.shape(), (Shape{64, 8}));
  EXPECT_EQ(y.shape(), (Shape{64, 8}));
  EXPECT_EQ(x.dtype(), DType::Int64);
  EXPECT_EQ(y.dtype(), DType::Int64);
  for (int64_t b = 0; b < 64; ++b) {
    const int64_t start = x.at<int64_t>({b, 0});
    EXPECT_GE(start, 0);
    EXPECT_LE(start, 100 - 8 - 1);
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(x.at<int64_t>({b, j}), start + j);
      EXPECT_EQ(y.at<int64_t>({b, j}), start + j + 1);  // y is x shifted by one
    }
  }
}

TEST(GetBatch, EveryOffsetFromZeroToNMinusTMinusOneIsDrawn) {
  // n = 12, T = 4: offsets in [0, 7], both ends included, nothing else.
  const Tensor tokens = arange(12);
  Generator gen(7);
  auto [x, y] = nn::get_batch(tokens, 2000, 4, gen);
  std::set<int64_t> starts;
  for (int64_t b = 0; b < 2000; ++b) starts.insert(x.at<int64_t>({b, 0}));
  EXPECT_EQ(starts, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(y.at<int64_t>({0, 3}), x.at<int64_t>({0, 3}) + 1);
}

TEST(GetBatch, ShortestArrayGivesTheOnlyWindow) {
  const Tensor tokens = tensor_i64({5, 9, 2, 7});  // n = T + 1
  Generator gen(1);
  auto [x, y] = nn::get_batch(tokens, 3, 3, gen);
  EXPECT_EQ(x.to_vector<int64_t>(), std::vector<int64_t>({5, 9, 2, 5, 9, 2, 5, 9, 2}));
  EXPECT_EQ(y.to_vector<int64_t>(), std::vector<int64_t>({9, 2, 7, 9, 2, 7, 9, 2, 7}));
}

TEST(GetBatch, SameSeedSameBatch) {
  const Tensor tokens = randint(0, 50000, {1000}, nullptr);
  Generator g1(123), g2(123), g3(124);
  auto [x1, y1] = nn::get_batch(tokens, 16, 32, g1);
  auto [x2, y2] = nn::get_batch(tokens, 16, 32, g2);
  auto [x3, y3] = nn::get_batch(tokens, 16, 32, g3);
  EXPECT_EQ(x1.to_vector<int64_t>(), x2.to_vector<int64_t>());
  EXPECT_EQ(y1.to_vector<int64_t>(), y2.to_vector<int64_t>());
  EXPECT_NE(x1.to_vector<int64_t>(), x3.to_vector<int64_t>());
  // The generator advanced: the next batch differs from the first.
  auto [x4, y4] = nn::get_batch(tokens, 16, 32, g1);
  EXPECT_NE(x4.to_vector<int64_t>(), x1.to_vector<int64_t>());
}

TEST(GetBatch, StridedTokens) {
  const Tensor tokens = slice(arange(200), 0, 0, 200, 2);  // 0, 2, 4, ..., stride 2
  Generator gen(3);
  auto [x, y] = nn::get_batch(tokens, 8, 5, gen);
  for (int64_t b = 0; b < 8; ++b) {
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(x.at<int64_t>({b, j}) % 2, 0);
      EXPECT_EQ(y.at<int64_t>({b, j}), x.at<int64_t>({b, j}) + 2);
    }
  }
}

TEST(GetBatch, BadInputs) {
  Generator gen(0);
  std::string msg = error_of([&] { nn::get_batch(arange(8), 2, 8, gen); });
  EXPECT_THAT(msg, AllOf(HasSubstr("get_batch"), HasSubstr("8 tokens"), HasSubstr("9")));
  msg = error_of([&] { nn::get_batch(view(arange(12), {3, 4}), 2, 2, gen); });
  EXPECT_THAT(msg, AllOf(HasSubstr("get_batch"), HasSubstr("1-D"), HasSubstr("[3, 4]")));
  msg = error_of([&] { nn::get_batch(zeros({20}), 2, 2, gen); });
  EXPECT_THAT(msg, AllOf(HasSubstr("get_batch"), HasSubstr("int64"), HasSubstr("float32")));
  msg = error_of([&] { nn::get_batch(arange(20), 0, 2, gen); });
  EXPECT_THAT(msg, AllOf(HasSubstr("get_batch"), HasSubstr("batch_size"), HasSubstr("0")));
  msg = error_of([&] { nn::get_batch(arange(20), 2, -1, gen); });
  EXPECT_THAT(msg, AllOf(HasSubstr("get_batch"), HasSubstr("context_length"), HasSubstr("-1")));
}

// ---- get_batch over memory-mapped token files ---------------------------------------------

// A fresh directory for one test's files, removed at the end.
struct TokenDir {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("ropegrad_optim_ids_" + std::to_string(::getpid()) + "_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                         .string();
  TokenDir() { std::filesystem::create_directories(path); }
  ~TokenDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string npy_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(128, '\0');
  in.read(head.data(), 128);
  return head;
}

TEST(GetBatch, MemoryMappedUint16Int32AndInt64FilesGiveTheTensorsBatch) {
  const TokenDir dir;
  std::vector<int32_t> small(300), large(300);
  for (int32_t i = 0; i < 300; ++i) {
    small[i] = (i * 7919) % 65536;   // fits uint16
    large[i] = (i * 7919) % 100000;  // needs int32
  }
  nn::save_token_ids(dir.file("u2.npy"), small);
  nn::save_token_ids(dir.file("i4.npy"), large);
  nn::save_npy(dir.file("i8.npy"), tensor_i64(std::vector<int64_t>(large.begin(), large.end()), {300}));
  const std::vector<std::pair<std::string, const std::vector<int32_t>*>> files = {
      {"u2", &small}, {"i4", &large}, {"i8", &large}};
  for (const auto& [kind, ids] : files) {
    const std::string path = dir.file(kind + ".npy");
    ASSERT_NE(npy_header(path).find("'<" + kind + "'"), std::string::npos) << kind;
    const nn::TokenMemmap mapped(path);
    const Tensor in_memory = tensor_i64(std::vector<int64_t>(ids->begin(), ids->end()), {300});
    Generator a(9), b(9);
    for (int round = 0; round < 3; ++round) {
      const auto [x1, y1] = nn::get_batch(mapped, 6, 10, a);
      const auto [x2, y2] = nn::get_batch(in_memory, 6, 10, b);
      EXPECT_EQ(x1.dtype(), DType::Int64) << kind;
      EXPECT_EQ(x1.to_vector<int64_t>(), x2.to_vector<int64_t>()) << kind << " round " << round;
      EXPECT_EQ(y1.to_vector<int64_t>(), y2.to_vector<int64_t>()) << kind << " round " << round;
    }
  }
}

TEST(GetBatch, MemoryMappedBadIdsAndDtypesAreNamed) {
  const TokenDir dir;
  nn::save_npy(dir.file("negative.npy"), tensor_i64({1, 2, -5, 3}, {4}));
  const nn::TokenMemmap negative(dir.file("negative.npy"));
  Generator gen(0);
  EXPECT_RG_ERROR(nn::get_batch(negative, 1, 3, gen), "get_batch", "negative.npy", "token id -5 at position 2",
                  "negative");
  nn::save_token_ids(dir.file("big.npy"), {1, 2, 300, 3});
  EXPECT_RG_ERROR(nn::TokenMemmap(dir.file("big.npy")).check_ids(256, "text"), "text", "big.npy",
                  "token id 300 at position 2", "[0, 256)");
  nn::TokenMemmap(dir.file("big.npy")).check_ids(301, "text");  // every id below 301: no error
  nn::save_npy(dir.file("f4.npy"), zeros({4}));
  EXPECT_RG_ERROR(nn::TokenMemmap(dir.file("f4.npy")), "TokenMemmap", "'<f4'", "not a token id type");
  EXPECT_RG_ERROR(nn::get_batch(tensor_bool({true, false, true}, {3}), 1, 1, gen), "get_batch", "int64", "bool",
                  "TokenMemmap");
}

// ---- bad optimizer arguments ---------------------------------------------------------------

TEST(OptimizerArguments, AdamWRejectsBadHyperparameters) {
  Tensor p = zeros({2}).requires_grad_();
  std::string msg = error_of([&] { nn::AdamW({p}, {.lr = -0.001}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("learning rate"), HasSubstr("-0.001")));
  msg = error_of([&] { nn::AdamW({p}, {.betas = {1.0, 0.999}}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("index 0"), HasSubstr("1")));
  msg = error_of([&] { nn::AdamW({p}, {.betas = {-0.5, 0.999}}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("index 0"), HasSubstr("-0.5")));
  msg = error_of([&] { nn::AdamW({p}, {.betas = {0.9, 1.5}}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("index 1"), HasSubstr("1.5")));
  msg = error_of([&] { nn::AdamW({p}, {.betas = {0.9, std::nan("")}}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("index 1"), HasSubstr("nan")));
  msg = error_of([&] { nn::AdamW({p}, {.eps = -1e-8}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("epsilon"), HasSubstr("-1e-08")));
  msg = error_of([&] { nn::AdamW({p}, {.weight_decay = -0.25}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("weight_decay"), HasSubstr("-0.25")));
  nn::AdamW opt({p});
  msg = error_of([&] { opt.set_lr(-0.5); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW.set_lr"), HasSubstr("-0.5")));
  EXPECT_EQ(opt.lr(), 1e-3);
}

TEST(OptimizerArguments, SGDRejectsBadHyperparameters) {
  Tensor p = zeros({2}).requires_grad_();
  std::string msg = error_of([&] { nn::SGD({p}, {.lr = -0.1}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("learning rate"), HasSubstr("-0.1")));
  msg = error_of([&] { nn::SGD({p}, {.lr = 0.1, .momentum = -0.9}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("momentum"), HasSubstr("-0.9")));
  msg = error_of([&] { nn::SGD({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = -0.01}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("weight_decay"), HasSubstr("-0.01")));
  msg = error_of([&] { nn::SGD({p}, {.lr = 0.1, .nesterov = true}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("Nesterov"), HasSubstr("momentum 0")));
  msg = error_of([&] { nn::SGD({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5, .nesterov = true}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("Nesterov"), HasSubstr("dampening 0.5")));
  nn::SGD opt({p}, {.lr = 0.1});
  msg = error_of([&] { opt.set_lr(-2.0); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD.set_lr"), HasSubstr("-2")));
}

TEST(OptimizerArguments, BadParameterLists) {
  std::string msg = error_of([] { nn::AdamW({}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("empty parameter list")));
  msg = error_of([] { nn::SGD({}, {.lr = 0.1}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("empty parameter list")));
  Tensor p = zeros({2}).requires_grad_();
  msg = error_of([&] { nn::AdamW({p, arange(3)}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("parameter 1"), HasSubstr("int64")));
  Tensor non_leaf = mul(p, 2.0);  // (2,), has a grad_fn
  msg = error_of([&] { nn::AdamW({non_leaf}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("non-leaf"), HasSubstr("[2]")));
  msg = error_of([&] { nn::AdamW({p, p}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("AdamW"), HasSubstr("parameter 1"), HasSubstr("parameter 0")));
  msg = error_of([&] { nn::SGD({p, Tensor()}, {.lr = 0.1}); });
  EXPECT_THAT(msg, AllOf(HasSubstr("SGD"), HasSubstr("parameter 1"), HasSubstr("undefined")));
}
