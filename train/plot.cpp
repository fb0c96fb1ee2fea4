#include "train/plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include "tensor/error.h"

namespace ropegrad::tasks {

namespace {
// "Nice" tick spacing (1, 2 or 5 times a power of ten) for about `count` ticks.
double tick_step(double range, int count) {
  const double raw = range / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}
// Text as SVG character data: &, < and > escaped.
std::string xml_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '&') out += "&amp;";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else out += ch;
  }
  return out;
}
}  // namespace

void write_svg_plot(const std::string& path, const std::vector<Series>& series, const std::string& title,
                    const std::string& x_label, const std::string& y_label, double y_max, bool tick_at_last_x,
                    double y_min) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(y)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  }
  RG_CHECK(std::isfinite(x0) && std::isfinite(y0), "plot", "nothing to plot in '{}'", path);
  y1 = std::min(y1, y_max);
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  y0 = std::min(y0, y_min);
  size_t longest = 0;  // the legend's widest name, in characters
  for (const Series& s : series) longest = std::max(longest, s.name.size());
  const double right = std::max(170.0, 50 + 7 * static_cast<double>(longest)), left = 70, top = 40, bottom = 55;
  const double w = 550 + right, h = std::max(440.0, top + bottom + 20 * static_cast<double>(series.size()) + 10);
  const double pw = w - left - right, ph = h - top - bottom;
  const auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  const auto py = [&](double y) { return top + ph - (std::min(y, y1) - y0) / (y1 - y0) * ph; };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  static const char* dashes[] = {"", " stroke-dasharray=\"6 3\"", " stroke-dasharray=\"2 2\"", " stroke-dasharray=\"8 3 2 3\""};

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
      w, h, left + pw / 2, xml_escape(title));
  const double xs = tick_step(x1 - x0, 6), ys = tick_step(y1 - y0, 6);
  std::vector<double> x_ticks;
  for (double x = std::ceil(x0 / xs) * xs; x <= x1 + 1e-9; x += xs) x_ticks.push_back(x);
  // The last x, unless a tick sits on it or so near that the labels would overlap.
  if (tick_at_last_x && (x_ticks.empty() || px(x1) - px(x_ticks.back()) > 30)) x_ticks.push_back(x1);
  for (double x : x_ticks) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
                       px(x), top, top + ph, top + ph + 18, x);
  }
  for (double y = std::ceil(y0 / ys) * ys; y <= y1 + 1e-9; y += ys) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       left, py(y), left + pw, left - 6, py(y) + 4, y);
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top,
                     pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, h - 12, xml_escape(x_label));
  svg += fmt::format("<text x=\"16\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">{}</text>\n",
                     top + ph / 2, top + ph / 2, xml_escape(y_label));
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const char* color = colors[(s.color >= 0 ? static_cast<size_t>(s.color) : i) % 10];
    const char* dash = s.dash >= 0 ? dashes[s.dash % 4] : s.dashed ? dashes[1] : dashes[(i / 10) % 4];
    std::string points, dots;
    for (const auto& [x, y] : series[i].points) {
      if (!std::isfinite(y)) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
      if (series[i].markers)
        dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", px(x), py(y), color);
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{} points=\"{}\"/>\n", color, dash,
                       points);
    if (!dots.empty()) svg += dots + "\n";
    const double ly = top + 16 + 20 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"3\"{7}/>"
                       "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       left + pw + 12, ly, left + pw + 36, color, left + pw + 42, ly + 4, xml_escape(series[i].name), dash);
  }
  svg += "</svg>\n";
  std::ofstream out(path);
  RG_CHECK(out.good(), "plot", "cannot write '{}'", path);
  out << svg;
}

}  // namespace ropegrad::tasks
