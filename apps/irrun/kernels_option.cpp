// `--kernels`: which pooling kernels run and bench use (kernels::Kernels).
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"

namespace irrun::cli {
namespace {

// In the order --help and errors list them.
const std::vector<std::pair<std::string, kernels::Kernels>>& kernel_names() {
  static const std::vector<std::pair<std::string, kernels::Kernels>> names{
      {"best", kernels::Kernels::best},
      {"avx2", kernels::Kernels::avx2},
      {"portable", kernels::Kernels::portable},
      {"reference", kernels::Kernels::reference}};
  return names;
}

}  // namespace

void add_kernels_option(CLI::App* cmd, kernels::Kernels& choice) {
  // A string option, so that a bad value is reported by name ("bogus not in {...}").
  cmd->add_option_function<std::string>(
         "--kernels",
         [&choice](const std::string& name) {
           for (const auto& [n, k] : kernel_names())
             if (n == CLI::detail::to_lower(name)) choice = k;
         },
         "best (the fast kernels, AVX-512 or AVX2 where the CPU has them), avx2 or portable "
         "(the fast kernels capped there: the same bits), or reference (the readable reference "
         "kernels: the same bits but on f32 AvgPool, within one ulp)")
      ->check(CLI::IsMember(kernel_names(), CLI::ignore_case))
      ->default_str("best");
}

std::string kernels_name(kernels::Kernels choice) {
  for (const auto& [name, k] : kernel_names())
    if (k == choice) return name;
  return "best";
}

}  // namespace irrun::cli
