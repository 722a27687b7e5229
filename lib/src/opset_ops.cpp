#include "irrun/opset_ops.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "irrun/spelling.hpp"

namespace irrun {
namespace {

// One row per op name and run of consecutive opsets that register it. A name in several runs has
// several rows: OpenVINO moved LSTMSequence-0, RNNCell and ShuffleChannels out of opset2 ("added
// to opset1 by mistake") and back in later opsets, and Reverse and Xor out for good. A new version
// of an op (AvgPool-14, Gather-8) keeps the name, and so the row.
//
// From OpenVINO's opset1_tbl.hpp .. opset16_tbl.hpp; the count of each opset matches OpenVINO's
// own opset test (opset1 110, opset2 112, opset3 127, opset4 137, opset5 145, opset6 152,
// opset7 156, opset8 167, opset9 173, opset10 177, opset11 177, opset12 178, opset13 186,
// opset14 188, opset15 199). opset16 is still partial in OpenVINO: Parameter, Convert and ShapeOf
// of the earlier opsets, and the ops added to it across its releases (Identity, ISTFT, SegmentMax,
// SparseFillEmptyRows, AvgPool-16, OneHot-16, MOE): 10. opset1's tables lack MVN, ROIPooling and
// ReorgYolo, which OpenVINO's IR reader takes from opset2 instead.
struct OpsetRange {
  std::string_view name;
  int first;
  int last;
};

constexpr OpsetRange kOpsetOps[]{
    {"Abs", 1, 15},
    {"Acos", 1, 15},
    {"Acosh", 4, 15},
    {"AdaptiveAvgPool", 8, 15},
    {"AdaptiveMaxPool", 8, 15},
    {"Add", 1, 15},
    {"Asin", 1, 15},
    {"Asinh", 4, 15},
    {"Assign", 3, 15},
    {"Atan", 1, 15},
    {"Atanh", 4, 15},
    {"AvgPool", 1, 16},
    {"BatchNormInference", 1, 15},
    {"BatchToSpace", 2, 15},
    {"BinaryConvolution", 1, 15},
    {"BitwiseAnd", 13, 15},
    {"BitwiseLeftShift", 15, 15},
    {"BitwiseNot", 13, 15},
    {"BitwiseOr", 13, 15},
    {"BitwiseRightShift", 15, 15},
    {"BitwiseXor", 13, 15},
    {"Broadcast", 1, 15},
    {"Bucketize", 3, 15},
    {"Ceiling", 1, 15},
    {"Clamp", 1, 15},
    {"Col2Im", 15, 15},
    {"Concat", 1, 15},
    {"Constant", 1, 15},
    {"Convert", 1, 16},
    {"ConvertLike", 1, 15},
    {"ConvertPromoteTypes", 14, 15},
    {"Convolution", 1, 15},
    {"ConvolutionBackpropData", 1, 15},
    {"Cos", 1, 15},
    {"Cosh", 1, 15},
    {"CTCGreedyDecoder", 1, 15},
    {"CTCGreedyDecoderSeqLen", 6, 15},
    {"CTCLoss", 4, 15},
    {"CumSum", 3, 15},
    {"DeformableConvolution", 1, 15},
    {"DeformablePSROIPooling", 1, 15},
    {"DepthToSpace", 1, 15},
    {"DetectionOutput", 1, 15},
    {"DFT", 7, 15},
    {"Divide", 1, 15},
    {"Einsum", 7, 15},
    {"Elu", 1, 15},
    {"EmbeddingBagOffsets", 15, 15},
    {"EmbeddingBagOffsetsSum", 3, 15},
    {"EmbeddingBagPacked", 15, 15},
    {"EmbeddingBagPackedSum", 3, 15},
    {"EmbeddingSegmentsSum", 3, 15},
    {"Equal", 1, 15},
    {"Erf", 1, 15},
    {"Exp", 1, 15},
    {"ExperimentalDetectronDetectionOutput", 6, 15},
    {"ExperimentalDetectronGenerateProposalsSingleImage", 6, 15},
    {"ExperimentalDetectronPriorGridGenerator", 6, 15},
    {"ExperimentalDetectronROIFeatureExtractor", 6, 15},
    {"ExperimentalDetectronTopKROIs", 6, 15},
    {"ExtractImagePatches", 3, 15},
    {"Eye", 9, 15},
    {"FakeConvert", 13, 15},
    {"FakeQuantize", 1, 15},
    {"Floor", 1, 15},
    {"FloorMod", 1, 15},
    {"Gather", 1, 15},
    {"GatherElements", 6, 15},
    {"GatherND", 5, 15},
    {"GatherTree", 1, 15},
    {"Gelu", 2, 15},
    {"GenerateProposals", 9, 15},
    {"Greater", 1, 15},
    {"GreaterEqual", 1, 15},
    {"GridSample", 9, 15},
    {"GRN", 1, 15},
    {"GroupConvolution", 1, 15},
    {"GroupConvolutionBackpropData", 1, 15},
    {"GroupNormalization", 12, 15},
    {"GRUCell", 3, 15},
    {"GRUSequence", 5, 15},
    {"HardSigmoid", 1, 15},
    {"HSigmoid", 5, 15},
    {"HSwish", 4, 15},
    {"I420toBGR", 8, 15},
    {"I420toRGB", 8, 15},
    {"Identity", 16, 16},
    {"IDFT", 7, 15},
    {"If", 8, 15},
    {"Interpolate", 1, 15},
    {"Inverse", 14, 15},
    {"IRDFT", 9, 15},
    {"IsFinite", 10, 15},
    {"IsInf", 10, 15},
    {"IsNaN", 10, 15},
    {"ISTFT", 16, 16},
    {"Less", 1, 15},
    {"LessEqual", 1, 15},
    {"Log", 1, 15},
    {"LogicalAnd", 1, 15},
    {"LogicalNot", 1, 15},
    {"LogicalOr", 1, 15},
    {"LogicalXor", 1, 15},
    {"LogSoftmax", 5, 15},
    {"Loop", 5, 15},
    {"LRN", 1, 15},
    {"LSTMCell", 1, 15},
    {"LSTMSequence", 1, 3},
    {"LSTMSequence", 5, 15},
    {"MatMul", 1, 15},
    {"MatrixNms", 8, 15},
    {"Maximum", 1, 15},
    {"MaxPool", 1, 15},
    {"Minimum", 1, 15},
    {"Mish", 4, 15},
    {"Mod", 1, 15},
    {"MOE", 16, 16},
    {"MulticlassNms", 8, 15},
    {"Multinomial", 13, 15},
    {"Multiply", 1, 15},
    {"MVN", 2, 15},
    {"Negative", 1, 15},
    {"NMSRotated", 13, 15},
    {"NonMaxSuppression", 1, 15},
    {"NonZero", 3, 15},
    {"NormalizeL2", 1, 15},
    {"NotEqual", 1, 15},
    {"NV12toBGR", 8, 15},
    {"NV12toRGB", 8, 15},
    {"OneHot", 1, 16},
    {"Pad", 1, 15},
    {"Parameter", 1, 16},
    {"Power", 1, 15},
    {"PRelu", 1, 15},
    {"PriorBox", 1, 15},
    {"PriorBoxClustered", 1, 15},
    {"Proposal", 1, 15},
    {"PSROIPooling", 1, 15},
    {"RandomUniform", 8, 15},
    {"Range", 1, 15},
    {"RDFT", 9, 15},
    {"ReadValue", 3, 15},
    {"ReduceL1", 4, 15},
    {"ReduceL2", 4, 15},
    {"ReduceLogicalAnd", 1, 15},
    {"ReduceLogicalOr", 1, 15},
    {"ReduceMax", 1, 15},
    {"ReduceMean", 1, 15},
    {"ReduceMin", 1, 15},
    {"ReduceProd", 1, 15},
    {"ReduceSum", 1, 15},
    {"RegionYolo", 1, 15},
    {"Relu", 1, 15},
    {"ReorgYolo", 2, 15},
    {"Reshape", 1, 15},
    {"Result", 1, 15},
    {"Reverse", 1, 1},
    {"ReverseSequence", 1, 15},
    {"RNNCell", 1, 1},
    {"RNNCell", 3, 15},
    {"RNNSequence", 5, 15},
    {"ROIAlign", 3, 15},
    {"ROIAlignRotated", 15, 15},
    {"ROIPooling", 2, 15},
    {"Roll", 7, 15},
    {"Round", 5, 15},
    {"ScaledDotProductAttention", 13, 15},
    {"ScatterElementsUpdate", 3, 15},
    {"ScatterNDUpdate", 4, 15},
    {"ScatterUpdate", 3, 15},
    {"SearchSorted", 15, 15},
    {"SegmentMax", 16, 16},
    {"Select", 1, 15},
    {"Selu", 1, 15},
    {"ShapeOf", 1, 16},
    {"ShuffleChannels", 1, 1},
    {"ShuffleChannels", 3, 15},
    {"Sigmoid", 1, 15},
    {"Sign", 1, 15},
    {"Sin", 1, 15},
    {"Sinh", 1, 15},
    {"Slice", 8, 15},
    {"SliceScatter", 15, 15},
    {"Softmax", 1, 15},
    {"SoftPlus", 4, 15},
    {"SoftSign", 9, 15},
    {"SpaceToBatch", 2, 15},
    {"SpaceToDepth", 1, 15},
    {"SparseFillEmptyRows", 16, 16},
    {"Split", 1, 15},
    {"Sqrt", 1, 15},
    {"SquaredDifference", 1, 15},
    {"Squeeze", 1, 15},
    {"STFT", 15, 15},
    {"StridedSlice", 1, 15},
    {"StringTensorPack", 15, 15},
    {"StringTensorUnpack", 15, 15},
    {"Subtract", 1, 15},
    {"Swish", 4, 15},
    {"Tan", 1, 15},
    {"Tanh", 1, 15},
    {"TensorIterator", 1, 15},
    {"Tile", 1, 15},
    {"TopK", 1, 15},
    {"Transpose", 1, 15},
    {"Unique", 10, 15},
    {"Unsqueeze", 1, 15},
    {"VariadicSplit", 1, 15},
    {"Xor", 1, 1},
};

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

const OpsetRange* find(int opset, std::string_view type) {
  for (const auto& op : kOpsetOps) {
    if (opset >= op.first && opset <= op.last && iequals(op.name, type)) return &op;
  }
  return nullptr;
}

}  // namespace

bool opset_contains(int opset, std::string_view type) {
  return find(opset, type) != nullptr;
}

std::vector<std::string_view> opset_op_names(int opset) {
  std::vector<std::string_view> names;
  for (const auto& op : kOpsetOps) {
    if (opset >= op.first && opset <= op.last) names.push_back(op.name);
  }
  return names;
}

std::string opsets_of(std::string_view type) {
  std::string s;
  for (const auto& op : kOpsetOps) {
    if (!iequals(op.name, type)) continue;
    if (!s.empty()) s += ", ";
    s += "opset" + std::to_string(op.first);
    if (op.last != op.first) s += "..opset" + std::to_string(op.last);
  }
  return s;
}

std::optional<std::string_view> nearest_op(int opset, std::string_view type) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const auto begin = type.find_first_not_of(kSpace);
  if (begin != std::string_view::npos) {
    const auto trimmed = type.substr(begin, type.find_last_not_of(kSpace) - begin + 1);
    if (trimmed != type) {
      if (const auto* op = find(opset, trimmed)) return op->name;
    }
  }
  std::optional<std::string_view> best;
  // At most 2 edits, and 1 for a type of up to 5 characters ("Conv" is not "Cos").
  std::size_t best_distance = type.size() <= 5 ? 2 : 3;
  for (const auto& op : kOpsetOps) {
    if (opset < op.first || opset > op.last) continue;
    const auto longer = std::max(op.name.size(), type.size());
    if (longer - std::min(op.name.size(), type.size()) >= best_distance) continue;
    const auto distance = edit_distance(op.name, type);
    if (distance < best_distance) {
      best = op.name;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace irrun
