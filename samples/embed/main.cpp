// Embedding irrun: load a model with one f32 input and one output (samples/avgpool_v11.xml),
// check it, and run it on arrays this program owns.
#include <irrun/irrun.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

std::size_t element_count(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.xml\n", argv[0]);
    return 2;
  }
  try {
    std::printf("irrun %s\n", irrun::version());
    const irrun::Network net = irrun::Network::load(argv[1]);

    const irrun::CheckResult check = net.check();
    for (const auto& line : check.messages) std::printf("%s\n", line.c_str());
    std::printf("check: %zu layer(s) checked, %zu error(s), %zu warning(s)\n", check.checked_layers,
                check.errors(), check.warnings());
    if (!check.passed()) return 1;

    if (net.inputs().size() != 1 || net.outputs().size() != 1) {
      std::fprintf(stderr, "this example wants one input and one output\n");
      return 2;
    }
    const irrun::PortInfo& in = net.inputs()[0];
    const irrun::PortInfo& out = net.outputs()[0];
    const auto dynamic = [](const irrun::PortInfo& p) {
      return p.dynamic_rank ||
             std::any_of(p.shape.begin(), p.shape.end(), [](std::int64_t d) { return d < 0; });
    };
    if (in.type != irrun::ElementType::f32 || out.type != irrun::ElementType::f32 || dynamic(in) ||
        dynamic(out)) {
      std::fprintf(stderr, "this example wants f32 and static shapes\n");
      return 2;
    }

    // Our memory: irrun reads the input in place and writes the output into our array.
    std::vector<float> input(element_count(in.shape));
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i);
    std::vector<float> output(element_count(out.shape));
    std::map<std::string, irrun::Tensor> outputs{
        {out.name, irrun::Tensor::wrap(out.type, out.shape, output.data())}};
    net.run({{in.name, irrun::Tensor::wrap(in.type, in.shape, std::as_const(input).data())}},
            outputs);

    // The first plane of the output, one row per line.
    std::printf("%s:", out.name.c_str());
    for (auto d : out.shape) std::printf(" %lld", static_cast<long long>(d));
    std::printf("\n");
    const std::size_t width = out.shape.empty() ? 1 : static_cast<std::size_t>(out.shape.back());
    const std::size_t height =
        out.shape.size() < 2 ? 1 : static_cast<std::size_t>(out.shape[out.shape.size() - 2]);
    for (std::size_t y = 0; y < height; ++y) {
      for (std::size_t x = 0; x < width; ++x) std::printf(" %g", output[y * width + x]);
      std::printf("\n");
    }
    return 0;
  } catch (const irrun::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
