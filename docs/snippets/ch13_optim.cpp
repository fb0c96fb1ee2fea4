// The outputs chapter 13 (loss, AdamW, learning-rate schedule and gradient
// clipping) shows, printed by the library itself; the docs test compares them
// with the chapter. One mode per block:
//   snippet_ch13_optim loss | grad | ignore-index | adamw | adamw-state | sgd | cosine | clip
//                      get-batch | get-batch-short
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "tasks/batch.h"
#include "nn/functional.h"
#include "optim/optim.h"
#include "optim/schedule.h"

using namespace ropegrad;

namespace {

// Logits (2, 1, 0) with target 0 and (1e4, 0, -1e4) with target 1.
Tensor two_rows() { return tensor({2.0, 1.0, 0.0, 1e4, 0.0, -1e4}, {2, 3}, DType::Float64).requires_grad_(); }

// A one-element float64 parameter with value 1 whose gradient is always 0.5.
Tensor one_param() { return tensor({1.0}, DType::Float64).requires_grad_(); }
void set_half_grad(const Tensor& p) { p.set_grad(tensor({0.5}, DType::Float64)); }

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "loss" || what == "grad") {
    Tensor logits = two_rows();
    Tensor loss = nn::cross_entropy(logits, tensor_i64({0, 1}));
    if (what == "loss") {
      std::cout << "loss " << loss << "\n";
    } else {
      backward(loss);
      std::cout << "grad\n" << logits.grad() << "\n";
    }
  } else if (what == "ignore-index") {
    // the second row's target is ignore_index: no loss, no gradient, not counted
    Tensor logits = tensor({2.0, 1.0, 0.0, 0.0, 0.0, 0.0}, {2, 3}, DType::Float64).requires_grad_();
    Tensor loss = nn::cross_entropy(logits, tensor_i64({0, -100}));
    backward(loss);
    std::cout << "ignore_index: loss " << loss << " grad\n" << logits.grad() << "\n";
  } else if (what == "adamw" || what == "adamw-state") {
    // theta = 1, g = 0.5, lr = 0.1, weight_decay = 0.01, two steps
    Tensor p = one_param();
    nn::AdamW opt({p}, {.lr = 0.1, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.01});
    set_half_grad(p);
    opt.step();
    if (what == "adamw-state") {
      std::cout << "state_dict keys:";
      for (const auto& [key, value] : opt.state_dict()) std::cout << " " << key;
      std::cout << "\n";
      return 0;
    }
    fmt::print("AdamW step 1: p = {:.12f}\n", p.item());
    set_half_grad(p);
    opt.step();
    fmt::print("AdamW step 2 (same grad): p = {:.12f}\n", p.item());
  } else if (what == "sgd") {
    // lr = 0.1, momentum 0.9, a constant gradient 0.5
    Tensor p = one_param();
    nn::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
    for (int step = 1; step <= 3; ++step) {
      set_half_grad(p);
      opt.step();
      fmt::print("SGD momentum 0.9 step {}: p = {:.6f}\n", step, p.item());
    }
  } else if (what == "cosine") {
    // CS336's test values: lr_max 1, lr_min 0.1, Tw 7, Tc 21
    std::cout << "cosine_lr(lr_max=1, lr_min=0.1, Tw=7, Tc=21):";
    for (int64_t t : {0, 3, 7, 10, 14, 21, 22, 25}) fmt::print(" t={}:{:.6f}", t, nn::cosine_lr(t, 1.0, 0.1, 7, 21));
    std::cout << "\n";
  } else if (what == "clip") {
    // gradients (3, 0) and (4): global norm 5, clipped to just under 1
    Tensor a = tensor({0.0, 0.0}, DType::Float64).requires_grad_();
    Tensor b = tensor({0.0}, DType::Float64).requires_grad_();
    a.set_grad(tensor({3.0, 0.0}, DType::Float64));
    b.set_grad(tensor({4.0}, DType::Float64));
    const double norm = nn::clip_grad_norm_({a, b}, 1.0);
    fmt::print("clip: norm {:.1f}, grads now {:.9f} {:.9f} {:.9f}\n", norm, a.grad().at({0}), a.grad().at({1}),
               b.grad().at({0}));
  } else if (what == "get-batch") {
    // tokens 100 .. 109, B = 3, T = 4
    Generator gen(0);
    const auto [x, y] = nn::get_batch(arange(100, 110), 3, 4, gen);
    std::cout << "x =\n" << x << "\ny =\n" << y << "\n";
  } else if (what == "get-batch-short") {
    Generator gen(0);
    try {
      (void)nn::get_batch(arange(100, 104), 1, 4, gen);
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
  } else {
    std::cerr << "usage: snippet_ch13_optim loss | grad | ignore-index | adamw | adamw-state | sgd | cosine | clip |"
                 " get-batch | get-batch-short\n";
    return 2;
  }
  return 0;
}
