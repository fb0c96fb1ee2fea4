// expect: compiles
// CS336's order (lr, weight_decay, betas, eps) through the chain, and the designated form.
#include "optim/optim.h"
void f(std::vector<ropegrad::Tensor> params) {
  using ropegrad::nn::AdamW, ropegrad::nn::AdamWOptions;
  AdamW a(params, AdamWOptions::chain(1e-3).weight_decay(0.1).betas(0.9, 0.95).eps(1e-8));
  AdamW b(params, {.lr = 1e-3, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1});
  ropegrad::nn::SGD c(params, ropegrad::nn::SGDOptions::chain(0.1).nesterov(true).momentum(0.9));
}
