// Dequantize one weight code of the MAC core's mpGEMM path: w = scale * (code - zero) rounded once
// (RNE) to float format OutType. scale is FP16, code and zero are unsigned WBits-bit integers, so
// code - zero is an integer of at most WBits bits (exact in FP16) and the product of the two
// significands is exact before the single rounding: the same value as converting code - zero to
// FP16 and one ltc_fp_mul, and as golden::dequantize_codes. A zero difference gives a zero with the
// scale's sign; an infinite scale times zero and a NaN scale give the canonical NaN.

`include "ltc_pkg.sv"

module ltc_dequant_unit #(
  parameter int WBits = 4,
  parameter int OutType = ltc_pkg::FP16,
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic [WBits-1:0]    code_i,
  input  logic [WBits-1:0]    zero_i,
  input  logic [15:0]         scale_i,
  output logic [OutWidth-1:0] w_o
);
  localparam int ScaleType = ltc_pkg::FP16;
  localparam int ProdWidth = 11 + WBits;

  logic                 s_sign, s_zero, s_inf, s_nan;
  logic signed [11:0]   s_exp;
  logic [10:0]          s_sig;
  logic [WBits:0]       diff;
  logic                 diff_neg, diff_zero;
  logic [WBits-1:0]     diff_mag;
  logic [ProdWidth-1:0] prod, prod_norm;
  logic [7:0]           lead_zeros;
  logic signed [11:0]   prod_exp;

  ltc_fp_unpack #(.Type(ScaleType)) u_unpack_scale (
    .x_i   (scale_i),
    .sign_o(s_sign),
    .zero_o(s_zero),
    .inf_o (s_inf),
    .nan_o (s_nan),
    .exp_o (s_exp),
    .sig_o (s_sig)
  );

  // code - zero as a sign and a WBits-bit magnitude.
  assign diff      = {1'b0, code_i} - {1'b0, zero_i};
  assign diff_neg  = diff[WBits];
  assign diff_mag  = diff_neg ? WBits'(-diff) : diff[WBits-1:0];
  assign diff_zero = (diff_mag == '0);

  // sig * 2^(s_exp - 10) * mag, normalized: the MSB of prod sits at ProdWidth-1-lead_zeros.
  assign prod = ProdWidth'(s_sig) * ProdWidth'(diff_mag);

  ltc_norm_shift #(.Width(ProdWidth)) u_norm (
    .x_i    (prod),
    .y_o    (prod_norm),
    .count_o(lead_zeros)
  );

  assign prod_exp = s_exp + 12'(WBits) - $signed({4'b0, lead_zeros});

  ltc_fp_round_pack #(.Type(OutType), .SigWidth(ProdWidth)) u_pack (
    .sign_i  (s_sign ^ diff_neg),
    .zero_i  (s_zero | diff_zero),
    .inf_i   (s_inf),
    .nan_i   (s_nan | (s_inf & diff_zero)),
    .exp_i   (prod_exp),
    .sig_i   (prod_norm),
    .sticky_i(1'b0),
    .y_o     (w_o)
  );
endmodule
