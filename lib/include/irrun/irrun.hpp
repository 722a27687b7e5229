// irrun's public API: include this one header and link irrun::irrun (find_package(irrun)).
//
// Public (installed by `cmake --install`, kept source-compatible within a minor version):
//   irrun/irrun.hpp         this umbrella
//   irrun/network.hpp       Network: load a model, check it, run it; PortInfo, CheckResult
//   irrun/tensor.hpp        Tensor and Buffer, including views of caller memory (wrap); the
//                           process-wide memory limit
//   irrun/element_type.hpp  ElementType
//   irrun/diagnostic.hpp    Diagnostic, what check() reports
//   irrun/error.hpp         Error and ExitCode, ModelError
//   irrun/version.hpp       IRRUN_VERSION_* and irrun::version()
// Every other header under lib/include/irrun/ (reader, graph, ops, analysis, kernels, npy,
// golden, manifest...) is internal to irrun's tool and tests: not installed, free to change.
//
//   irrun::Network net = irrun::Network::load("model.xml");
//   if (!net.check().passed()) ...;                    // diagnostics, as `irrun check`
//   float in[1 * 3 * 8 * 8] = {...}, out[1 * 3 * 5 * 5];
//   std::map<std::string, irrun::Tensor> outputs{
//       {"pool", irrun::Tensor::wrap(irrun::ElementType::f32, {1, 3, 5, 5}, out)}};
//   net.run({{"input", irrun::Tensor::wrap(irrun::ElementType::f32, {1, 3, 8, 8}, in)}}, outputs);
#pragma once

#include "irrun/diagnostic.hpp"
#include "irrun/element_type.hpp"
#include "irrun/error.hpp"
#include "irrun/network.hpp"
#include "irrun/tensor.hpp"
#include "irrun/version.hpp"
