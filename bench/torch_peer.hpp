// PyTorch's rows of irrun_bench (torch_peer.cpp; built when CMake finds Debian's libtorch-dev).
#pragma once

// Registers the torch_* rows of every benchmark shape. `capability` (nullptr: PyTorch's own
// choice) caps ATen's kernels: "default", "avx2" or "avx512".
void register_torch_benchmarks(const char* capability);
