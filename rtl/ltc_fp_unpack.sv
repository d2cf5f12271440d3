// Float unpack: sign, class, unbiased exponent and normalized significand (subnormals are
// normalized, so sig_o[Man] is 1 for every finite nonzero input).

`include "ltc_pkg.sv"

module ltc_fp_unpack #(
  parameter int Type = ltc_pkg::FP16,
  localparam int Exp = ltc_pkg::exp_bits(Type),
  localparam int Man = ltc_pkg::man_bits(Type),
  localparam int Width = ltc_pkg::width(Type)
) (
  input  logic [Width-1:0]   x_i,
  output logic               sign_o,
  output logic               zero_o,
  output logic               inf_o,
  output logic               nan_o,
  output logic signed [11:0] exp_o,
  output logic [Man:0]       sig_o
);
  localparam logic [11:0] Bias = 12'((1 << (Exp - 1)) - 1);

  logic [Exp-1:0] exp_field;
  logic [Man-1:0] frac;
  logic           exp_ones, exp_zero;
  logic [7:0]     lz;

  assign sign_o    = x_i[Width-1];
  assign exp_field = x_i[Width-2 -: Exp];
  assign frac      = x_i[Man-1:0];
  assign exp_ones  = &exp_field;
  assign exp_zero  = ~|exp_field;

  if (ltc_pkg::has_inf(Type)) begin : g_ieee
    assign nan_o = exp_ones & (|frac);
    assign inf_o = exp_ones & ~(|frac);
  end else begin : g_e4m3
    assign nan_o = exp_ones & (&frac);
    assign inf_o = 1'b0;
  end
  assign zero_o = exp_zero & ~(|frac);

  ltc_norm_shift #(.Width(Man + 1)) u_norm (
    .x_i    ({~exp_zero, frac}),
    .y_o    (sig_o),
    .count_o(lz)
  );

  // Subnormals have the exponent of the smallest normal, less the normalization shift.
  assign exp_o = $signed(exp_zero ? 12'd1 : 12'(exp_field)) - $signed(Bias) - $signed({4'b0, lz});
endmodule
