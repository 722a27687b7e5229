// The test runner. Kernels run small layers on the caller alone (Parallel::fork_grain); the tests
// split them across threads anyway, so that their small geometries cover every chunk boundary.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "irrun/parallel.hpp"

int main(int argc, char* argv[]) {
  irrun::Parallel::fork_bytes = 0;
  return Catch::Session().run(argc, argv);
}
