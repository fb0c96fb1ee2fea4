// NumPy's .npy format (version 1.0/2.0/3.0): the way course material and
// ropegrad's PyTorch fixtures hand tensors to C++.
//
// Layout: magic "\x93NUMPY", major/minor version bytes, a little-endian
// header length (2 bytes in v1, 4 in v2/v3), a Python-dict header such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a multiple of 64, then the raw row-major data.
#pragma once

#include <string>
#include <string_view>

#include "tensor/tensor.h"

namespace ropegrad::nn {

// The header dict of a .npy file, read as strictly as numpy reads it (a
// Python literal): exactly the keys 'descr' (a string), 'fortran_order'
// (True or False) and 'shape' (a tuple of non-negative integers; one element
// needs its trailing comma), nothing after the closing brace but spaces and
// the newline. `(two 2 by 3 three)` or `Falsehood` is an Error from `op`
// naming `path`, the column and the header, quoted printably.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};
NpyHeader parse_npy_header(std::string_view dict, const std::string& path, std::string_view op);

// Reads float32 ('<f4'), float64 ('<f8'), int64 ('<i8', also '<i4' widened)
// and bool ('|b1') arrays in C order. A missing, truncated or malformed file
// is an Error naming the file and what is wrong; so is a shape whose size in
// bytes (in the file, or as a tensor in memory) does not fit in int64, checked
// before anything is allocated or any stride computed.
Tensor load_npy(const std::string& path);

// Writes a tensor as a version 1.0 .npy file.
void save_npy(const std::string& path, const Tensor& t);

}  // namespace ropegrad::nn
