// A line plot written as SVG by hand (no plotting library): the loss curves
// of `ropegrad compare`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ropegrad::tasks {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Writes the series as an SVG line chart with axes, ticks and a legend.
void write_svg_plot(const std::string& path, const std::vector<Series>& series, const std::string& title,
                    const std::string& x_label, const std::string& y_label);

}  // namespace ropegrad::tasks
