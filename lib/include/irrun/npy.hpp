// NumPy .npy files: reads format versions 1.0, 2.0 and 3.0 (little-endian, C order, plain numeric
// dtypes) and writes version 1.0 as numpy.save does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "irrun/file_io.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct NpyHeader {
  ElementType type = ElementType::undefined;
  std::vector<std::int64_t> shape;  // () is a scalar: empty shape, one element
  std::string descr;                // as found, e.g. "<f4"
  std::size_t data_offset = 0;      // bytes from the start of the file to the data
  std::size_t data_size = 0;        // bytes the header's dtype and shape require
};

// Parses the preamble (magic, version, header dict) of an .npy file held in `file`. Does not
// check the data size. Throws irrun::input_error naming `name` and the offending value.
NpyHeader parse_npy_header(std::span<const std::byte> file, const std::string& name);

// Maps an .npy file; the tensor's buffer is a view of the mapping (copied only if the data is
// misaligned for its element type). The data size must equal the header's exactly.
Tensor read_npy(const std::string& path);

// Whether `path` names an .npy file: its extension is .npy in any case (X.NPY too); anything
// else is a raw blob.
bool is_npy_path(const std::string& path);

// The same on the bytes of a whole .npy file already in memory (the tensor shares `file`);
// `name` is only used in messages.
Tensor read_npy(const Buffer& file, const std::string& name);

// Complete v1.0 preamble for `type` and `shape`, padded with spaces and ending in '\n' so the
// data starts at a multiple of 64 bytes. bf16 is described as "<f4" (write_npy widens it).
// Throws irrun::Error(unsupported) for types numpy has no dtype for (i4, u1, f8..., ...).
std::string npy_header(ElementType type, const std::vector<std::int64_t>& shape);

// Writes `t` atomically as .npy v1.0 (`batch`: renamed with the batch's other files, see
// file_io.hpp); bf16 is widened losslessly to f32.
void write_npy(const std::string& path, const Tensor& t, FileBatch* batch = nullptr);

}  // namespace irrun
