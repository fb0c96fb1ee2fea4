// One small thread pool for all the parallel work: elementwise maps, softmax
// rows, norms, attention blocks and GEMMs (OpenBLAS runs single-threaded
// inside it; tensor/matmul.cpp splits the products). We use plain
// std::threads rather than OpenMP on purpose: two pools spinning next to each
// other on a 2-core machine make both slower (the trap PyTorch falls into
// without OMP_WAIT_POLICY=PASSIVE). Idle threads spin for at most 50 us
// before they sleep (docs/03-matmul-and-blas.md, "Threads").
//
// Work is split into contiguous chunks, each computed exactly as a single
// thread would: an elementwise or row kernel gives the same bits on any
// number of threads. (A GEMM split into sub-matrix calls may round
// differently from the unsplit call; see docs/03-matmul-and-blas.md.)
#pragma once

#include <cstdint>
#include <functional>

namespace ropegrad {

// Threads used (the caller counts as one): ROPEGRAD_NUM_THREADS, else the
// number of cores (at most 8).
int num_threads();
void set_num_threads(int n);

// The pool's size for ROPEGRAD_NUM_THREADS = `setting` (nullptr: unset):
// a whole number in 1..1024, more than 64 running as 64, read by the one
// number parser (tensor/parse_number.h); anything else is an Error naming
// the variable and the value (a typo must not quietly fall back to the
// cores). Unset: the number of cores, at most 8.
int threads_from_setting(const char* setting);

// Calls fn(begin_i, end_i) on disjoint chunks covering [begin, end), in
// parallel when there are at least 2 * grain items; nested calls run inline.
// An exception thrown by fn in any chunk is rethrown here, in the caller,
// after every chunk has finished (the lowest chunk's, if several throw).
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ropegrad
