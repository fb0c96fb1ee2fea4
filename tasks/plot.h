// A line plot written as SVG by hand (no plotting library): the loss curves
// of `ropegrad compare` and `ropegrad sweep`.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ropegrad::tasks {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Writes the series as an SVG line chart with axes, ticks and a legend (the
// chart grows to fit long names and many series; past six, lines are dashed).
// The y axis ends at y_max when a value goes higher (a diverged run's last
// loss would flatten every other curve): such points are drawn on the top edge.
void write_svg_plot(const std::string& path, const std::vector<Series>& series, const std::string& title,
                    const std::string& x_label, const std::string& y_label, double y_max = INFINITY);

}  // namespace ropegrad::tasks
