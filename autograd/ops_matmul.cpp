// matmul and its backward.
//
// For C = A B:  dA = dC B^T,  dB = A^T dC.
// B^T and A^T are transposed *views*: matmul hands them to BLAS as transpose
// flags, so the backward copies nothing. Broadcast batch dims are summed back.
#include "autograd/ops.h"
#include "tensor/exercise.h"

namespace ropegrad {

namespace {

// Both operands at least 2-D.
Tensor matmul_nd(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::matmul(a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, "matmul", {a, b},
                [sa = SavedTensor(a, "matmul"), sb = SavedTensor(b, "matmul")](
                    const Tensor& g, const NeedsGrad& needs) -> Grads {
                  Grads grads(2);
                  // BEGIN EXERCISE ex03-matmul-backward
                  const Tensor av = sa.unpack(), bv = sb.unpack();
                  if (needs[0]) {
                    grads[0] = kernels::sum_to(kernels::matmul(g, kernels::transpose(bv, -1, -2)), av.shape());
                  }
                  if (needs[1]) {
                    if (bv.dim() == 2 && av.dim() > 2) {
                      // A weight shared by the whole batch: one GEMM over all
                      // rows, (k, B*T) @ (B*T, n), instead of B GEMMs and a sum.
                      const Tensor a2 = kernels::reshape(av, {-1, av.size(-1)});
                      const Tensor g2 = kernels::reshape(g, {-1, g.size(-1)});
                      grads[1] = kernels::matmul(kernels::transpose(a2, 0, 1), g2);
                    } else {
                      grads[1] = kernels::sum_to(kernels::matmul(kernels::transpose(av, -1, -2), g), bv.shape());
                    }
                  }
                  // END EXERCISE ex03-matmul-backward
                  return grads;
                });
  }
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul",
           "both arguments need at least 1 dimension, got shapes {} and {}", shape_str(a.shape()),
           shape_str(b.shape()));
  // Checked here, on the caller's shapes, before the vector cases add dims.
  const int64_t k_a = a.size(-1), k_b = b.dim() == 1 ? b.size(0) : b.size(-2);
  RG_CHECK(k_a == k_b, "matmul", "shapes {} and {} cannot be multiplied ({} != {})", shape_str(a.shape()),
           shape_str(b.shape()), k_a, k_b);
  if (a.dim() > 2 || b.dim() > 2) {
    const Shape batch_a(a.shape().begin(), a.shape().end() - std::min<int64_t>(a.dim(), 2));
    const Shape batch_b(b.shape().begin(), b.shape().end() - std::min<int64_t>(b.dim(), 2));
    try {
      broadcast_shapes(batch_a, batch_b, "matmul");
    } catch (const Error&) {
      fail("matmul", "the batch dims of shapes {} and {} cannot be broadcast together ({} vs {})",
           shape_str(a.shape()), shape_str(b.shape()), shape_str(batch_a), shape_str(batch_b));
    }
  }
  // torch.matmul's vector rules: a 1-D left operand is a row, a 1-D right
  // operand a column; the added dim is removed from the result.
  if (a.dim() == 1 && b.dim() == 1) {
    return reshape(matmul_nd(unsqueeze(a, 0), unsqueeze(b, 1)), {});
  }
  if (a.dim() == 1) return squeeze(matmul_nd(unsqueeze(a, 0), b), -2);
  if (b.dim() == 1) return squeeze(matmul_nd(a, unsqueeze(b, 1)), -1);
  return matmul_nd(a, b);
}

}  // namespace ropegrad
