// matmul with torch.matmul semantics, computed by cblas_sgemm / cblas_dgemm.
//
// BLAS reads a matrix from a pointer, a leading dimension and a transpose
// flag. A row-major (m, k) matrix with row stride lda is "NoTrans"; its
// transposed view (strides swapped) is the same memory read as "Trans". So a
// transposed view costs nothing: we pass the flag instead of copying.
#include <cblas.h>

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <optional>

#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ropegrad::kernels {

namespace {

struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;  // leading dimension
};

// How BLAS can read a (rows, cols) matrix with element strides (s0, s1), if it can.
std::optional<BlasOperand> blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  // Size-1 dims may carry any stride; only the others constrain the layout.
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols))) {
    return BlasOperand{CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : s0};
  }
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows))) {
    return BlasOperand{CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : s1};
  }
  return std::nullopt;  // e.g. an expanded (stride 0) or strided-slice matrix
}

// A tensor whose last two dims BLAS can read, copying only when it must.
Tensor blas_ready(const Tensor& t) {
  const int64_t n = t.dim();
  if (blas_layout(t.shape()[n - 2], t.shape()[n - 1], t.strides()[n - 2], t.strides()[n - 1])) {
    return t;
  }
  return contiguous(t);
}

template <typename T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a,
          int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  }
}

// One GEMM, split across the thread pool by rows of C (or by columns when
// there are few rows): each part is an ordinary single-threaded BLAS call on
// a sub-matrix, found by pointer arithmetic — no copies.
template <typename T>
void parallel_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                   const T* b, int64_t ldb, T* c, int64_t ldc) {
  constexpr int64_t kMinFlopsPerPart = 1 << 20;
  const int64_t work = m * n * k;
  if (work < 2 * kMinFlopsPerPart) {
    gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  parallel_for(0, extent, std::max<int64_t>(16, kMinFlopsPerPart / std::max<int64_t>(work / extent, 1)),
               [&](int64_t lo, int64_t hi) {
                 if (by_rows) {  // rows lo..hi of A (row i starts at i*lda, or at i when A is read transposed)
                   const T* a_part = a + (ta == CblasNoTrans ? lo * lda : lo);
                   gemm<T>(ta, tb, hi - lo, n, k, a_part, lda, b, ldb, c + lo * ldc, ldc);
                 } else {  // columns lo..hi of B and C
                   const T* b_part = b + (tb == CblasNoTrans ? lo : lo * ldb);
                   gemm<T>(ta, tb, m, hi - lo, k, a, lda, b_part, ldb, c + lo, ldc);
                 }
               });
}

// The GEMM trace (GemmTrace in tensor/kernels.h).
std::atomic<bool> g_tracing{false};
std::mutex g_trace_mutex;
std::vector<GemmCall> g_trace;

// out[batch] = a[batch] @ b[batch] for every batch index; a and b are
// already broadcast (stride 0 on broadcast batch dims) to out's batch shape.
template <typename T>
void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t nd = out.dim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  const auto la = *blas_layout(m, k, a.strides()[nd - 2], a.strides()[nd - 1]);
  const auto lb = *blas_layout(k, n, b.strides()[nd - 2], b.strides()[nd - 1]);
  const Shape batch(out.shape().begin(), out.shape().end() - 2);
  const int64_t batches = numel_of(batch);
  record_gemm({la.trans == CblasTrans, lb.trans == CblasTrans, m, n, k, batches, false, out.dtype()});
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* pc = out.data_ptr<T>();
  if (batches == 1) {
    parallel_gemm<T>(la.trans, lb.trans, m, n, k, pa, la.ld, pb, lb.ld, pc, std::max<int64_t>(1, n));
    return;
  }
  // Independent GEMMs: whole batches go to the thread pool.
  parallel_for(0, batches, std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(m * n * k, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t i = lo; i < hi; ++i) {
                   int64_t off_a = 0, off_b = 0, rest = i;
                   for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
                     const int64_t index = rest % batch[d];
                     rest /= batch[d];
                     off_a += index * a.strides()[d];
                     off_b += index * b.strides()[d];
                   }
                   gemm<T>(la.trans, lb.trans, m, n, k, pa + off_a, la.ld, pb + off_b, lb.ld, pc + i * m * n,
                           std::max<int64_t>(1, n));
                 }
               });
}

}  // namespace

// OpenBLAS's pthreads build starts a worker thread per extra core when it
// loads, and on the Debian build measured here (0.3.21) an idle worker keeps
// polling with sched_yield even after openblas_set_num_threads(1): about 5 %
// of a core in a profile of a training step, taken from the cores our own
// pool runs on. blas_thread_shutdown_ stops and joins them (OpenBLAS starts
// them again by itself if the count is raised later). It is not in cblas.h
// and not in every build (the OpenMP one has no such pool), so it is looked
// up at run time and skipped where it is missing.
void use_single_threaded_blas() {
  if (openblas_get_num_threads() == 1) return;  // the common case
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (openblas_get_num_threads() == 1) return;
  openblas_set_num_threads(1);
  using StopWorkers = int (*)();
  if (const auto stop = reinterpret_cast<StopWorkers>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"))) stop();
}

GemmTrace::GemmTrace() {
  const std::lock_guard lock(g_trace_mutex);
  RG_CHECK(!g_tracing.load(), "GemmTrace", "a trace is already recording; one at a time");
  g_trace.clear();
  g_tracing.store(true);
}

GemmTrace::~GemmTrace() {
  const std::lock_guard lock(g_trace_mutex);
  g_tracing.store(false);
}

std::vector<GemmCall> GemmTrace::calls() const {
  const std::lock_guard lock(g_trace_mutex);
  return g_trace;
}

void record_gemm(const GemmCall& call) {
  if (!g_tracing.load(std::memory_order_relaxed)) return;
  const std::lock_guard lock(g_trace_mutex);
  if (g_tracing.load()) g_trace.push_back(call);
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  RG_CHECK(a_in.dim() >= 1 && b_in.dim() >= 1, "matmul",
           "both arguments need at least 1 dimension, got shapes {} and {}",
           shape_str(a_in.shape()), shape_str(b_in.shape()));
  RG_CHECK(a_in.dtype() == b_in.dtype(), "matmul", "expected both operands to have the same dtype, got {} and {}",
           dtype_name(a_in.dtype()), dtype_name(b_in.dtype()));
  RG_CHECK(is_floating(a_in.dtype()), "matmul", "BLAS matmul needs float32 or float64, got {}",
           dtype_name(a_in.dtype()));
  // 1-D operands: a vector on the left is a row (1, k), on the right a column (k, 1).
  const bool a_vec = a_in.dim() == 1, b_vec = b_in.dim() == 1;
  Tensor a = a_vec ? unsqueeze(a_in, 0) : a_in;
  Tensor b = b_vec ? unsqueeze(b_in, 1) : b_in;
  const int64_t m = a.size(-2), k = a.size(-1), k2 = b.size(-2), n = b.size(-1);
  RG_CHECK(k == k2, "matmul", "shapes {} and {} cannot be multiplied ({} != {})",
           shape_str(a_in.shape()), shape_str(b_in.shape()), k, k2);

  const Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  const Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);

  use_single_threaded_blas();
  Tensor out;
  if (k == 0) {
    out = Tensor::zeros_of(out_shape, a.dtype());  // empty sum
  } else if (b.dim() == 2 && a.dim() > 2 && a.is_contiguous()) {
    // (..., m, k) @ (k, n): fold the batch into the rows, one large GEMM.
    out = matmul(view(a, {-1, k}), b);
    out = view(out, out_shape);
  } else {
    out = Tensor::empty(out_shape, a.dtype());
    if (numel_of(out_shape) > 0) {
      Shape a_target = batch, b_target = batch;
      a_target.insert(a_target.end(), {m, k});
      b_target.insert(b_target.end(), {k, n});
      const Tensor ab = expand(blas_ready(a), a_target);
      const Tensor bb = expand(blas_ready(b), b_target);
      dispatch_floating(a.dtype(), "matmul", [&](auto tag) { batched_gemm<decltype(tag)>(ab, bb, out); });
    }
  }
  if (a_vec) out = squeeze(out, -2);
  if (b_vec) out = squeeze(out, -1);
  return out;
}

}  // namespace ropegrad::kernels
