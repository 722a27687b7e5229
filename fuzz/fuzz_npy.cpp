// libFuzzer target: arbitrary bytes as a whole .npy file: the header parser, the full read path
// on a buffer, value summaries and float conversion of what was read, and a round trip of the
// header irrun would write for the same dtype and shape. The only acceptable failure is
// irrun::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "irrun/blob.hpp"
#include "irrun/error.hpp"
#include "irrun/npy.hpp"
#include "irrun/tensor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  irrun::set_memory_limit(std::uint64_t{256} << 20);
  const auto bytes = std::as_bytes(std::span(data, size));
  try {
    (void)irrun::parse_npy_header(bytes, "fuzz.npy");
  } catch (const irrun::Error&) {
  }
  // The whole file in an owned buffer, at an aligned and at a misaligned address (the reader
  // copies misaligned data).
  for (std::size_t shift : {0, 1}) {
    try {
      auto storage = irrun::Buffer::allocate(size + shift);
      if (size) std::memcpy(storage.mutable_data() + shift, data, size);
      const auto file = storage.slice(shift, size);
      const auto t = irrun::read_npy(file, "fuzz.npy");
      if (t.byte_size() != t.buffer.size()) std::abort();
      (void)irrun::first_values(t, 8);
      if (t.element_count() <= 4096) {
        (void)irrun::stats(t);
        if (irrun::is_floating(t.type)) (void)irrun::convert_float(t, irrun::ElementType::bf16);
      }
      // What irrun writes for this dtype and shape must read back as the same dtype and shape.
      const std::string header = irrun::npy_header(t.type, t.shape);
      const auto back = irrun::parse_npy_header(std::as_bytes(std::span(header)), "round-trip");
      if (back.type != t.type || back.shape != t.shape || back.data_offset != header.size())
        std::abort();
    } catch (const irrun::Error&) {
    }
  }
  return 0;
}
