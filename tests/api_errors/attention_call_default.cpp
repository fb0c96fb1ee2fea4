// expect: no default call: write AttentionCall::causal() or AttentionCall::bidirectional()
// Code written for the release that had a default call.
#include "nn/attention.h"
void f() { ropegrad::nn::AttentionCall call; (void)call; }
