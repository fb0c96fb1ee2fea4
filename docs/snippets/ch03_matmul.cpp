// The outputs chapter 3 (docs/03-matmul-and-blas.md) shows; the docs test
// compares them with the chapter. Usage: snippet_ch03_matmul MODE:
//   copies  temporary bytes of kernels::matmul(A, B) for A in five layouts
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "tensor/kernels.h"
#include "tensor/storage.h"

using namespace ropegrad;

namespace {

// Bytes allocated by kernels::matmul(A, B) beyond its output: the copies
// made to hand A to BLAS.
int64_t temporary_bytes(const Tensor& A, const Tensor& B) {
  const int64_t before = memory_stats().current_bytes;
  reset_peak_memory();
  const Tensor C = kernels::matmul(A, B);
  return memory_stats().peak_bytes - before - C.numel() * static_cast<int64_t>(element_size(C.dtype()));
}

void row(const std::string& label, const Tensor& A, const Tensor& B, const std::string& note = "") {
  std::string line = fmt::format("{:<39}A strides {:<10}temporary bytes {:<7}{}", label, shape_str(A.strides()),
                                 temporary_bytes(A, B), note);
  line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks
  std::cout << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "copies") {
    const Tensor B = ones({32, 16});          // float32 [32, 16]
    const Tensor A = ones({64, 32});
    const Tensor At = ones({32, 64});
    const Tensor wide = ones({64, 64});
    const Tensor row_vector = ones({32});
    row("A @ B (contiguous)", A, B);
    row("At^T @ B (transposed view)", kernels::transpose(At, 0, 1), B);
    row("A[:, :32] of a [64, 64] (narrow)", kernels::narrow(wide, 1, 0, 32), B, "ld = 64");
    row("A[:, ::2] of a [64, 64] (strided)", kernels::slice(wide, 1, 0, 64, 2), B, "copied");
    row("row.expand(64, 32) (stride 0)", kernels::expand(row_vector, {64, 32}), B, "copied");
  } else {
    std::cerr << "usage: snippet_ch03_matmul copies\n";
    return 2;
  }
  return 0;
}
