// Runs inputs through a fuzz target without libFuzzer: the normal build links each target with
// this main() as <target>_replay, and ctest replays the committed seeds with it (fuzz/
// CMakeLists.txt), so every past finding is retried by every test run, under ASan+UBSan too,
// without clang's libFuzzer.
//   <target>_replay FILE...              each file is one input
//   <target>_replay --weights X.xml...   each X.xml followed by X.bin when there is one (how
//                                        scripts/fuzz seeds fuzz_check)
// A target reports a finding by aborting; after the last input this prints the count, exits 0.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool append_file(const std::filesystem::path& path, std::vector<std::uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool weights = false;
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--weights") {
      weights = true;
      continue;
    }
    std::vector<std::uint8_t> bytes;
    if (!append_file(arg, bytes)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], arg.c_str());
      return 2;
    }
    if (weights) append_file(std::filesystem::path(arg).replace_extension(".bin"), bytes);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++count;
  }
  std::printf("%s: %d inputs, no finding\n", argv[0], count);
  return 0;
}
