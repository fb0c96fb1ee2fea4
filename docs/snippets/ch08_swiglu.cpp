// The outputs chapter 8 (docs/08-swiglu.md) shows; the docs test compares
// them with the chapter. Usage: snippet_ch08_swiglu MODE:
//   silu        silu at -2..2 in float64
//   parameters  the parameter names and shapes of SwiGLU(512)
//   d-ff        SwiGLU::default_d_ff for common model widths, as a Markdown table
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/layers.h"
#include "tensor/print.h"

using namespace ropegrad;

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "silu") {
    std::cout << silu(tensor({-2, -1, 0, 1, 2}, DType::Float64)) << "\n";
  } else if (what == "parameters") {
    nn::SwiGLU ffn(512);
    for (const auto& [name, t] : ffn.named_parameters()) std::cout << name << " " << shape_str(t.shape()) << "\n";
    std::cout << "num_parameters " << ffn.num_parameters() << "\n";
  } else if (what == "d-ff") {
    std::cout << "| $D$ | $\\tfrac83 D$ | $d_\\text{ff}$ |\n|---:|---:|---:|\n";
    for (const int64_t d : {64, 128, 256, 512, 768, 1024, 1280, 1600, 2048, 4096}) {
      std::cout << fmt::format("| {} | {:.2f} | {} |\n", d, 8.0 * static_cast<double>(d) / 3.0,
                               nn::SwiGLU::default_d_ff(d));
    }
  } else {
    std::cerr << "usage: snippet_ch08_swiglu silu | parameters | d-ff\n";
    return 2;
  }
  return 0;
}
