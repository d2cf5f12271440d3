// Float to float conversion times 2^scale with one rounding: widening (exact), the bit-serial
// plane scale (an exponent add: exact unless it overflows) and output narrowing (RNE).
`include "ltc_dtype.svh"

module ltc_fp_convert #(
  parameter int InType = 3,
  parameter int OutType = 7,
  parameter int ScaleWidth = 3,
  localparam int InWidth = `LTC_DT_WIDTH(InType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType)
) (
  input  logic [InWidth-1:0]    x_i,
  input  logic [ScaleWidth-1:0] scale_i,
  output logic [OutWidth-1:0]   y_o
);
  localparam int InMan = `LTC_DT_MAN(InType);

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
