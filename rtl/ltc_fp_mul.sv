// Float product of formats TypeA and TypeB rounded once (RNE) to format OutType: the MAC baseline's
// multiplier. inf * 0 and NaN operands give the canonical NaN.

`include "ltc_pkg.sv"

module ltc_fp_mul #(
  parameter int TypeA = ltc_pkg::FP16,
  parameter int TypeB = ltc_pkg::FP16,
  parameter int OutType = ltc_pkg::FP32,
  localparam int WidthA = ltc_pkg::width(TypeA),
  localparam int WidthB = ltc_pkg::width(TypeB),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic [WidthA-1:0]   a_i,
  input  logic [WidthB-1:0]   b_i,
  output logic [OutWidth-1:0] y_o
);
  localparam int ManA = ltc_pkg::man_bits(TypeA);
  localparam int ManB = ltc_pkg::man_bits(TypeB);
  localparam int ProdWidth = ManA + ManB + 2;

  logic                 a_sign, a_zero, a_inf, a_nan, b_sign, b_zero, b_inf, b_nan;
  logic signed [11:0]   a_exp, b_exp, prod_exp;
  logic [ManA:0]        a_sig;
  logic [ManB:0]        b_sig;
  logic [ProdWidth-1:0] prod, prod_norm;

  ltc_fp_unpack #(.Type(TypeA)) u_unpack_a (
    .x_i   (a_i),
    .sign_o(a_sign),
    .zero_o(a_zero),
    .inf_o (a_inf),
    .nan_o (a_nan),
    .exp_o (a_exp),
    .sig_o (a_sig)
  );

  ltc_fp_unpack #(.Type(TypeB)) u_unpack_b (
    .x_i   (b_i),
    .sign_o(b_sign),
    .zero_o(b_zero),
    .inf_o (b_inf),
    .nan_o (b_nan),
    .exp_o (b_exp),
    .sig_o (b_sig)
  );

  // Both significands are normalized, so the product has its MSB in one of the top two bits.
  assign prod      = ProdWidth'(a_sig) * ProdWidth'(b_sig);
  assign prod_norm = prod[ProdWidth-1] ? prod : prod << 1;
  assign prod_exp  = a_exp + b_exp + (prod[ProdWidth-1] ? 12'sd1 : 12'sd0);

  ltc_fp_round_pack #(.Type(OutType), .SigWidth(ProdWidth)) u_pack (
    .sign_i  (a_sign ^ b_sign),
    .zero_i  (a_zero | b_zero),
    .inf_i   (a_inf | b_inf),
    .nan_i   (a_nan | b_nan | (a_inf & b_zero) | (b_inf & a_zero)),
    .exp_i   (prod_exp),
    .sig_i   (prod_norm),
    .sticky_i(1'b0),
    .y_o     (y_o)
  );
endmodule
