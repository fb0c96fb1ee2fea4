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
  bool dashed = false;   // drawn dashed whatever its place (a reference to compare with)
  bool markers = false;  // a dot at every point (so a curve under another still shows)
  int color = -1;        // an index into the palette of ten colours; -1: by the series' place
  int dash = -1;         // 0 solid, 1 dashed, 2 dotted, 3 dash-dot; -1: by place (or `dashed`)
};

// Writes the series as an SVG line chart with axes, ticks and a legend (the
// chart grows to fit long names and many series; ten colours, then the lines
// are dashed). The y axis ends at y_max when a value goes higher (a diverged
// run's last loss would flatten every other curve): such points are drawn on
// the top edge. It starts at y_min, or lower where a value is lower (0 by
// default: a loss axis from zero). With tick_at_last_x, the last x (the last
// step) gets a labelled tick too.
void write_svg_plot(const std::string& path, const std::vector<Series>& series, const std::string& title,
                    const std::string& x_label, const std::string& y_label, double y_max = INFINITY,
                    bool tick_at_last_x = false, double y_min = 0);

}  // namespace ropegrad::tasks
