// Weight formats (docs/arithmetic.md#weight-quantization) and how each maps onto unsigned bit
// planes: real weight r = s * (q - z) with q an unsigned W-bit code and (s, z) per output row and
// per group of G input columns. Signed INTn, binary +-1 and ternary are the same form with a fixed
// zero point, so one LUT datapath serves all of them; multi-basis binary (FluxBin) has its own type
// below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ltc::golden {

enum class WeightKind : uint8_t {
  kUInt,     // q in [0, 2^W), min-max scale and integer zero point per group
  kSInt,     // q_signed in [-2^(W-1), 2^(W-1)), stored as q = q_signed + 2^(W-1), z = 2^(W-1)
  kBinary,   // {-1, +1}: W = 1, q = (b + 1) / 2, stored scale 2*alpha, z = 1/2
  kTernary,  // BitNet b1.58 {-1, 0, +1}: W = 2 (2-bit storage), q = t + 1, z = 1, absmean scale
};
std::string_view weight_kind_name(WeightKind k);

struct QuantizedWeights {
  WeightKind kind = WeightKind::kUInt;
  int n = 0;                   // output channels (rows)
  int k = 0;                   // input channels (columns)
  int wbits = 1;               // planes, 1..8
  int group_size = 0;          // G input columns per (scale, zero); == k for per-channel
  std::vector<uint8_t> codes;  // n * k, row-major
  std::vector<double> scales;  // n * groups()
  std::vector<double> zeros;   // n * groups(); half-integers allowed (binary)

  int groups() const { return (k + group_size - 1) / group_size; }
  double scale(int row, int group) const { return scales[size_t(row) * groups() + group]; }
  double zero(int row, int group) const { return zeros[size_t(row) * groups() + group]; }
  double dequant(int row, int col) const;
  // Throws InputError for bad sizes, codes >= 2^W, W outside 1..8, NaN/inf scales or zeros.
  void validate() const;
};

// Round-to-nearest quantization of a real n x k matrix (row-major). group_size 0 means per channel.
// kBinary requires wbits 1, kTernary wbits 2, kSInt wbits >= 2.
QuantizedWeights quantize_weights(WeightKind kind, int wbits, int group_size,
                                  const std::vector<double>& w, int n, int k);

// Multi-basis binary (FluxBin): W_hat[r,c] = sum_j alpha_r[j][r, c/g] * alpha_c[j][c] * B_j[r,c],
// B_j in {-1,+1}, plus `salient` columns per group of g kept dense (a second branch). Column scales
// fold into the tables (each basis gets its own table: precomputed from a_c * alpha_c[j][c]);
// row scales are applied per group in the epilogue. Per-basis tables are not shift-added like
// INT planes.
struct MultiBasisBinaryWeights {
  int n = 0, k = 0;
  int bases = 2;                   // K_b
  int group = 128;                 // g: columns per row-scale group
  int salient = 0;                 // s: dense columns per group
  std::vector<uint8_t> signs;      // bases * n * k, 1 means +1 (salient columns hold 0)
  std::vector<double> row_scales;  // bases * n * groups()
  std::vector<double> col_scales;  // bases * k
  std::vector<int> salient_cols;   // groups() * salient absolute column indices
  std::vector<double> salient_w;   // n * groups() * salient dense weights

  int groups() const { return (k + group - 1) / group; }
  bool is_salient(int col) const;
  double dequant(int row, int col) const;
  // Storage per weight: bases sign bits + 16-bit row scales per group + 16-bit column scales +
  // salient columns as 16-bit values with 16-bit indices, amortized over n * k.
  double bits_per_weight() const;
  void validate() const;
};

// Greedy residual binarization per basis (sign of the residual, least-squares row scale per group,
// then column scale by alternating least squares for `als_iters` rounds). Salient columns are the
// `salient` columns of each group with the largest L2 norm.
MultiBasisBinaryWeights fit_multi_basis_binary(const std::vector<double>& w, int n, int k,
                                               int bases, int group, int salient,
                                               int als_iters = 2);

}  // namespace ltc::golden
