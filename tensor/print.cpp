#include "tensor/print.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/kernels.h"

namespace ropegrad {

namespace {

constexpr int64_t kSummarizeThreshold = 1000;  // torch's print threshold
constexpr int64_t kEdgeItems = 3;
constexpr int kPrecision = 4;

GradFnNamer g_namer = nullptr;

// Chooses one number format for all elements, as torch's _Formatter does.
struct Formatter {
  DType dtype;
  bool int_mode = false;  // floats that are all whole numbers print as "3."
  bool sci_mode = false;
  size_t width = 1;

  explicit Formatter(const Tensor& t, const std::vector<double>& values) : dtype(t.dtype()) {
    if (is_floating(dtype)) {
      std::vector<double> finite_nonzero;
      for (double v : values) {
        if (std::isfinite(v) && v != 0) finite_nonzero.push_back(std::abs(v));
      }
      int_mode = std::all_of(values.begin(), values.end(),
                             [](double v) { return !std::isfinite(v) || v == std::ceil(v); });
      if (!finite_nonzero.empty()) {
        const double max = *std::max_element(finite_nonzero.begin(), finite_nonzero.end());
        const double min = *std::min_element(finite_nonzero.begin(), finite_nonzero.end());
        sci_mode = int_mode ? (max / min > 1000.0 || max > 1e8) : (max / min > 1000.0 || max > 1e8 || min < 1e-4);
      }
    }
    for (double v : values) width = std::max(width, raw(v).size());
  }

  std::string raw(double v) const {
    switch (dtype) {
      case DType::Bool: return v != 0 ? "True" : "False";
      case DType::Int64: return fmt::format("{}", static_cast<int64_t>(v));
      default: break;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode) return fmt::format("{:.{}e}", v, kPrecision);
    if (int_mode) return fmt::format("{:.0f}.", v);
    return fmt::format("{:.{}f}", v, kPrecision);
  }

  std::string operator()(double v) const {
    std::string s = raw(v);
    return std::string(width - s.size(), ' ') + s;
  }
};

// Indices shown along one dim: all, or the first and last kEdgeItems.
std::vector<int64_t> shown(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  if (!summarize || n <= 2 * kEdgeItems) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);  // the "..." marker
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

void collect(const Tensor& t, bool summarize, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item<double>());
    return;
  }
  for (int64_t i : shown(t.shape()[0], summarize)) {
    if (i >= 0) collect(kernels::select(t, 0, i), summarize, out);
  }
}

constexpr size_t kLineWidth = 80;  // torch's print linewidth

// A row of numbers, wrapped at the line width like torch's _vector_str.
void render_vector(const Tensor& t, const Formatter& f, bool summarize, size_t indent, std::string& out) {
  std::vector<std::string> items;
  for (int64_t i : shown(t.shape()[0], summarize)) {
    items.push_back(i < 0 ? std::string(" ...") : f(kernels::select(t, 0, i).item<double>()));
  }
  const size_t element_length = f.width + 2;  // the number, a comma and a space
  const size_t per_line = std::max<size_t>(1, (kLineWidth - std::min(indent, kLineWidth)) / element_length);
  out += '[';
  for (size_t k = 0; k < items.size(); ++k) {
    if (k > 0) {
      out += k % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : std::string(", ");
    }
    out += items[k];
  }
  out += ']';
}

void render(const Tensor& t, const Formatter& f, bool summarize, size_t indent, std::string& out) {
  if (t.dim() == 0) {
    out += f(t.item<double>());
    return;
  }
  if (t.dim() == 1) {
    render_vector(t, f, summarize, indent, out);
    return;
  }
  out += '[';
  // Between slices: a comma, one newline per dim past the last two, indentation.
  std::string sep = ",";
  sep.append(static_cast<size_t>(t.dim() - 1), '\n');
  sep.append(indent + 1, ' ');
  const auto idx = shown(t.shape()[0], summarize);
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k > 0) out += sep;
    if (idx[k] < 0) {
      out += "...";
      continue;
    }
    render(kernels::select(t, 0, idx[k]), f, summarize, indent + 1, out);
  }
  out += ']';
}

}  // namespace

void set_grad_fn_namer(GradFnNamer namer) { g_namer = namer; }

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  std::string out = prefix;
  if (t.numel() == 0) {
    out += "[]";
  } else {
    const bool summarize = t.numel() > kSummarizeThreshold;
    std::vector<double> values;
    collect(t, summarize, values);
    render(t, Formatter(t, values), summarize, prefix.size(), out);
  }
  std::vector<std::string> suffix;
  if (t.numel() == 0 && t.dim() != 1) suffix.push_back(fmt::format("size=({})", fmt::join(t.shape(), ", ")));
  if (t.dtype() == DType::Float64) suffix.push_back("dtype=torch.float64");
  if (t.grad_fn() && g_namer != nullptr) {
    suffix.push_back(fmt::format("grad_fn=<{}>", g_namer(t)));
  } else if (t.requires_grad()) {
    suffix.push_back("requires_grad=True");
  }
  // Suffixes go on the last line unless it would pass the line width (torch's _add_suffixes).
  const size_t newline = out.rfind('\n');
  size_t last_line = newline == std::string::npos ? out.size() + 2 : out.size() - newline + 1;  // as torch counts
  for (const auto& s : suffix) {
    if (last_line + s.size() + 2 > kLineWidth) {
      out += ",\n" + std::string(prefix.size(), ' ') + s;
      last_line = prefix.size() + s.size();
    } else {
      out += ", " + s;
      last_line += s.size() + 2;
    }
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace ropegrad
