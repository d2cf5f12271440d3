// IEEE addition in float format Type, round to nearest even, subnormals kept; x + (-x) = +0,
// (-0) + (-0) = -0; NaN operands and inf - inf give the canonical NaN; overflow follows the format
// (infinity, or 448 for E4M3). Align with guard, round and sticky bits, add, normalize, round once.

`include "ltc_pkg.sv"

module ltc_fp_add #(
  parameter int Type = ltc_pkg::FP32,
  localparam int Width = ltc_pkg::width(Type)
) (
  input  logic [Width-1:0] a_i,
  input  logic [Width-1:0] b_i,
  output logic [Width-1:0] y_o
);
  localparam int Exp = ltc_pkg::exp_bits(Type);
  localparam int Man = ltc_pkg::man_bits(Type);
  localparam bit HasInf = ltc_pkg::has_inf(Type);
  localparam int SumWidth = Man + 5;  // carry, hidden bit, fraction, guard, round, sticky
  localparam logic [11:0] Bias = 12'((1 << (Exp - 1)) - 1);

  logic                a_nan, b_nan, a_inf, b_inf;
  logic                swap, big_sign, small_sign, eff_sub, sum_zero;
  logic [Width-2:0]    big_mag, small_mag;
  logic [Exp-1:0]      big_exp, small_exp, align;
  logic [SumWidth-1:0] big_x, small_full, small_x, sum, norm_sum, lost_mask;
  logic [7:0]          lz;
  logic signed [11:0]  sum_exp;

  function automatic logic is_nan(input logic [Width-2:0] mag);
    if (HasInf) is_nan = (&mag[Width-2 -: Exp]) & (|mag[Man-1:0]);
    else is_nan = &mag;
  endfunction

  assign a_nan = is_nan(a_i[Width-2:0]);
  assign b_nan = is_nan(b_i[Width-2:0]);
  assign a_inf = HasInf && (a_i[Width-2:0] == {{Exp{1'b1}}, {Man{1'b0}}});
  assign b_inf = HasInf && (b_i[Width-2:0] == {{Exp{1'b1}}, {Man{1'b0}}});

  assign swap       = b_i[Width-2:0] > a_i[Width-2:0];
  assign big_mag    = swap ? b_i[Width-2:0] : a_i[Width-2:0];
  assign small_mag  = swap ? a_i[Width-2:0] : b_i[Width-2:0];
  assign big_sign   = swap ? b_i[Width-1] : a_i[Width-1];
  assign small_sign = swap ? a_i[Width-1] : b_i[Width-1];
  assign eff_sub    = big_sign ^ small_sign;

  // Subnormals: exponent of the smallest normal, no hidden bit.
  assign big_exp   = (big_mag[Width-2 -: Exp] == '0) ? Exp'(1) : big_mag[Width-2 -: Exp];
  assign small_exp = (small_mag[Width-2 -: Exp] == '0) ? Exp'(1) : small_mag[Width-2 -: Exp];
  assign align      = big_exp - small_exp;

  assign big_x      = {1'b0, |big_mag[Width-2 -: Exp], big_mag[Man-1:0], 3'b000};
  assign small_full = {1'b0, |small_mag[Width-2 -: Exp], small_mag[Man-1:0], 3'b000};

  always_comb begin
    if (32'(align) >= SumWidth) begin
      lost_mask = '1;
      small_x   = {{(SumWidth - 1) {1'b0}}, |small_full};
    end else begin
      lost_mask = ~({SumWidth{1'b1}} << align);
      small_x   = (small_full >> align) | {{(SumWidth - 1) {1'b0}}, |(small_full & lost_mask)};
    end
  end

  assign sum      = eff_sub ? big_x - small_x : big_x + small_x;
  assign sum_zero = ~|sum;

  ltc_norm_shift #(.Width(SumWidth)) u_norm (
    .x_i    (sum),
    .y_o    (norm_sum),
    .count_o(lz)
  );

  // The hidden bit of the larger operand sits at SumWidth-2; the normalized MSB is one above.
  assign sum_exp = $signed(12'(big_exp)) - $signed(Bias) + 12'sd1 - $signed({4'b0, lz});

  ltc_fp_round_pack #(.Type(Type), .SigWidth(SumWidth)) u_pack (
    .sign_i  (a_inf ? a_i[Width-1] : b_inf ? b_i[Width-1] : sum_zero ? (a_i[Width-1] & b_i[Width-1]) : big_sign),
    .zero_i  (sum_zero),
    .inf_i   (a_inf | b_inf),
    .nan_i   (a_nan | b_nan | (a_inf & b_inf & (a_i[Width-1] ^ b_i[Width-1]))),
    .exp_i   (sum_exp),
    .sig_i   (norm_sum),
    .sticky_i(1'b0),
    .y_o     (y_o)
  );
endmodule
