// expect: no default call: write AttentionCall::causal() or AttentionCall::bidirectional()
// A forward called with {} for its call, as the earlier default allowed.
#include "nn/attention.h"
void f(ropegrad::nn::MultiHeadAttention& mha, const ropegrad::Tensor& x) { mha.forward(x, {}); }
