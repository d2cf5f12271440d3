// Float to float conversion times 2^scale with one rounding: widening (exact), the bit-serial
// plane scale (an exponent add: exact unless it overflows) and output narrowing (RNE).

`include "ltc_pkg.sv"

module ltc_fp_convert #(
  parameter int InType = ltc_pkg::FP16,
  parameter int OutType = ltc_pkg::FP32,
  parameter int ScaleWidth = 3,
  localparam int InWidth = ltc_pkg::width(InType),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic [InWidth-1:0]    x_i,
  input  logic [ScaleWidth-1:0] scale_i,
  output logic [OutWidth-1:0]   y_o
);
  localparam int InMan = ltc_pkg::man_bits(InType);

  logic               sign, zero, inf, nan;
  logic signed [11:0] exp;
  logic [InMan:0]     sig;

  ltc_fp_unpack #(.Type(InType)) u_unpack (
    .x_i   (x_i),
    .sign_o(sign),
    .zero_o(zero),
    .inf_o (inf),
    .nan_o (nan),
    .exp_o (exp),
    .sig_o (sig)
  );

  ltc_fp_round_pack #(.Type(OutType), .SigWidth(InMan + 1)) u_pack (
    .sign_i  (sign),
    .zero_i  (zero),
    .inf_i   (inf),
    .nan_i   (nan),
    .exp_i   (exp + $signed(12'(scale_i))),
    .sig_i   (sig),
    .sticky_i(1'b0),
    .y_o     (y_o)
  );
endmodule
