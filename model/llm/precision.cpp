#include "model/llm/precision.h"

#include "common/error.h"

#include <string>

namespace ltc::llm {
namespace {

constexpr const char* kValidWeights =
    "fp16, bf16, fp8e4m3, int8, int4, int2, int1, ternary, binary, intN:g=G, "
    "binary:kb=K,g=G,s=S";

[[noreturn]] void bad(std::string_view what, std::string_view text, const std::string& why) {
  throw InputError(std::string(what) + ": '" + std::string(text) + "' " + why +
                   " (valid: " + kValidWeights + ")");
}

int parse_int_field(std::string_view what, std::string_view text, std::string_view value) {
  if (value.empty() || value.size() > 6) bad(what, text, "has a bad number");
  int v = 0;
  for (char c : value) {
    if (c < '0' || c > '9') bad(what, text, "has a bad number");
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::string WeightFormat::name() const {
  switch (kind) {
    case WeightFormatKind::kFloat:
      return std::string(golden::dtype_name(dtype));
    case WeightFormatKind::kInt: {
      std::string s = "int" + std::to_string(bits);
      if (group_size > 0) s += ":g=" + std::to_string(group_size);
      return s;
    }
    case WeightFormatKind::kTernary:
      return "ternary";
    case WeightFormatKind::kBinary:
      return "binary";
    case WeightFormatKind::kMultiBasisBinary:
      return "binary:kb=" + std::to_string(bases) + ",g=" + std::to_string(group_size) +
             ",s=" + std::to_string(salient);
  }
  return "?";
}

int WeightFormat::planes() const {
  switch (kind) {
    case WeightFormatKind::kFloat:
      return 0;
    case WeightFormatKind::kInt:
      return bits;
    case WeightFormatKind::kTernary:
      return 2;
    case WeightFormatKind::kBinary:
      return 1;
    case WeightFormatKind::kMultiBasisBinary:
      return bases;
  }
  return 0;
}

double WeightFormat::bits_per_weight() const {
  switch (kind) {
    case WeightFormatKind::kFloat:
      return bits;
    case WeightFormatKind::kInt:
      return bits + (group_size > 0 ? 16.0 / group_size : 0.0);
    case WeightFormatKind::kTernary:
      return 2;
    case WeightFormatKind::kBinary:
      return 1;
    case WeightFormatKind::kMultiBasisBinary: {
      const double g = group_size;
      return bases + 16.0 * bases / g + (salient > 0 ? (32.0 + 2.0 * salient) / g : 0.0);
    }
  }
  return 0;
}

WeightFormat parse_weight_format(std::string_view text, std::string_view what) {
  WeightFormat f;
  const auto colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  const std::string_view opts = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (head == "fp16" || head == "bf16" || head == "fp8e4m3" || head == "fp8e5m2") {
    f.kind = WeightFormatKind::kFloat;
    f.dtype = golden::parse_dtype(head, what);
    f.bits = golden::dtype_bits(f.dtype);
    if (!opts.empty()) bad(what, text, "takes no options");
    return f;
  }
  if (head == "ternary") {
    f.kind = WeightFormatKind::kTernary;
    f.bits = 2;
    // BitNet b1.58's ternary weights carry one absmean scale per tensor: no group to give.
    if (!opts.empty()) bad(what, text, "takes no options (one scale per weight tensor)");
  } else if (head == "binary") {
    f.kind = opts.empty() ? WeightFormatKind::kBinary : WeightFormatKind::kMultiBasisBinary;
    f.bits = 1;
    if (!opts.empty()) f.group_size = 128;
  } else if (head.size() > 3 && head.substr(0, 3) == "int") {
    f.kind = WeightFormatKind::kInt;
    f.bits = parse_int_field(what, text, head.substr(3));
    if (f.bits < 1 || f.bits > 8) bad(what, text, "has a bit width outside 1..8");
  } else {
    bad(what, text, "is not a weight format");
  }
  // Options: comma-separated key=value.
  std::string_view rest = opts;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view kv = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) bad(what, text, "has an option without '='");
    const std::string_view key = kv.substr(0, eq);
    const int value = parse_int_field(what, text, kv.substr(eq + 1));
    if (key == "g") {
      if (value < 1) bad(what, text, "needs g >= 1");
      f.group_size = value;
    } else if (key == "kb" && f.kind == WeightFormatKind::kMultiBasisBinary) {
      if (value < 1 || value > 8) bad(what, text, "needs kb in 1..8");
      f.bases = value;
    } else if (key == "s" && f.kind == WeightFormatKind::kMultiBasisBinary) {
      f.salient = value;
    } else {
      bad(what, text, "has an unknown option '" + std::string(key) + "'");
    }
  }
  if (f.kind == WeightFormatKind::kMultiBasisBinary && f.salient >= f.group_size) {
    bad(what, text, "needs s < g");
  }
  return f;
}

}  // namespace ltc::llm
