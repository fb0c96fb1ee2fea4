// expect: AdamW(params, lr, betas, eps, weight_decay) is gone: name the settings
// The positional constructor of earlier releases.
#include "optim/optim.h"
void f(std::vector<ropegrad::Tensor> params) { ropegrad::nn::AdamW opt(params, 1e-3, {0.9, 0.95}, 1e-8, 0.1); }
