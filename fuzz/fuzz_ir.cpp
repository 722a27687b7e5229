// libFuzzer target: arbitrary bytes as IR XML through the reader, the graph builder and shape
// inference (with and without a fixed weights buffer), formatting every diagnostic. The only
// acceptable failure is irrun::Error; anything else (a crash, a sanitizer report, another
// exception, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "irrun/analysis.hpp"
#include "irrun/error.hpp"
#include "irrun/graph.hpp"
#include "irrun/ir_reader.hpp"
#include "irrun/tensor.hpp"

namespace {

// 4 KiB of i64 values that make interesting AdaptiveAvgPool output sizes and Const contents.
const irrun::Buffer& weights() {
  static const irrun::Buffer buffer = [] {
    constexpr std::int64_t kValues[] = {1, 2, 3, 4, 7, -1, 0, std::int64_t{1} << 40, -5, INT64_MAX};
    auto b = irrun::Buffer::allocate(4096);
    for (std::size_t i = 0; i < 4096 / 8; ++i) {
      const auto v = kValues[i % std::size(kValues)];
      std::memcpy(b.mutable_data() + 8 * i, &v, 8);
    }
    return b;
  }();
  return buffer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  irrun::set_memory_limit(std::uint64_t{256} << 20);
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  try {
    auto ir = irrun::parse_ir(xml, "fuzz.xml");
    const auto graph = irrun::build_graph(ir);
    for (const auto& d : ir.diagnostics) (void)irrun::format(ir, d);
    for (const irrun::Buffer* w : {&weights(), static_cast<const irrun::Buffer*>(nullptr)}) {
      const auto analysis = irrun::analyze(ir, graph, w);
      for (const auto& d : analysis.diagnostics) (void)irrun::format(ir, d);
    }
  } catch (const irrun::Error&) {
  }
  return 0;
}
