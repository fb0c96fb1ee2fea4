// Chapter 17's parameter table: TransformerLM::parameter_counts() for each
// attention variant in the Base configuration (the defaults of
// TransformerConfig: V 256, D 128, H 4, L 2, d_ff 8/3 D rounded up to 64).
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "nn/transformer.h"

using namespace ropegrad;
using namespace ropegrad::nn;

int main() {
  struct Column {
    std::string name;
    TransformerConfig config;
  };
  std::vector<Column> columns(5);
  columns[0].name = "standard";
  columns[1].name = "w2 (scalar)";
  columns[1].config.attention = AttentionKind::W2;
  columns[2].name = "w2 (vector)";
  columns[2].config.attention = AttentionKind::W2;
  columns[2].config.sigma = SigmaMode::Vector;
  columns[3].name = "triple";
  columns[3].config.attention = AttentionKind::Triple;
  columns[4].name = "standard, tied";
  columns[4].config.tie_embeddings = true;

  // part name -> count per column; "—" where a model has no such part
  std::vector<std::string> parts;
  std::vector<std::vector<std::string>> cells;
  for (size_t c = 0; c < columns.size(); ++c) {
    TransformerLM model(columns[c].config);
    for (const auto& [part, count] : model.parameter_counts()) {
      size_t row = 0;
      while (row < parts.size() && parts[row] != part) ++row;
      if (row == parts.size()) {
        parts.push_back(part);
        cells.emplace_back(columns.size(), "—");
      }
      cells[row][c] = std::to_string(count);
    }
  }
  std::cout << "| part |";
  for (const auto& col : columns) std::cout << " " << col.name << " |";
  std::cout << "\n|---|";
  for (size_t c = 0; c < columns.size(); ++c) std::cout << "---:|";
  std::cout << "\n";
  for (size_t row = 0; row < parts.size(); ++row) {
    std::cout << "| " << parts[row] << " |";
    for (const auto& cell : cells[row]) std::cout << " " << cell << " |";
    std::cout << "\n";
  }
  return 0;
}
