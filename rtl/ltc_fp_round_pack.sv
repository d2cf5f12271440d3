// Rounds sign * sig * 2^(exp - (SigWidth-1)) (plus a sticky fraction below sig) to nearest, ties to
// even, into float format Type: gradual underflow, overflow to infinity (E4M3: saturate to 448),
// canonical NaN. sig_i must be normalized (MSB 1) unless the value underflows to zero anyway.

`include "ltc_pkg.sv"

module ltc_fp_round_pack #(
  parameter int Type = ltc_pkg::FP32,
  parameter int SigWidth = 24,
  localparam int Width = ltc_pkg::width(Type)
) (
  input  logic                sign_i,
  input  logic                zero_i,
  input  logic                inf_i,
  input  logic                nan_i,
  input  logic signed [11:0]  exp_i,
  input  logic [SigWidth-1:0] sig_i,
  input  logic                sticky_i,
  output logic [Width-1:0]    y_o
);
  localparam int Exp = ltc_pkg::exp_bits(Type);
  localparam int Man = ltc_pkg::man_bits(Type);
  localparam bit HasInf = ltc_pkg::has_inf(Type);
  localparam int XW = SigWidth + Man + 2;
  localparam logic signed [12:0] Bias = 13'((1 << (Exp - 1)) - 1);
  localparam logic signed [12:0] ExpOnes = 13'((1 << Exp) - 1);
  localparam logic [Width-2:0] InfField = {{Exp{1'b1}}, {Man{1'b0}}};
  localparam logic [Width-2:0] MaxFiniteField = HasInf ? InfField - 1'b1 : {{(Width - 2) {1'b1}}, 1'b0};
  localparam logic [Width-1:0] CanonicalNan =
      HasInf ? {1'b0, {Exp{1'b1}}, 1'b1, {(Man - 1) {1'b0}}} : {1'b0, {(Width - 1) {1'b1}}};

  logic signed [12:0] biased;
  logic               normal;
  logic [12:0]        shift_raw;
  logic [XW-1:0]      sig_x, shifted, lost_mask;
  logic [Man-1:0]     mant;
  logic               guard, sticky, round_up, overflow;
  logic [Exp-1:0]     exp_field;
  logic [Width-1:0]   rounded;  // {carry, exponent, fraction}

  assign biased    = $signed({exp_i[11], exp_i}) + Bias;
  assign normal    = biased > 0;
  // Subnormal results shift right by 1 - biased; clamp so that huge shifts lose every bit.
  assign shift_raw = normal ? 13'd0 : 13'(13'sd1 - biased);
  assign sig_x     = {sig_i, {(Man + 2) {1'b0}}};

  always_comb begin
    if (shift_raw >= 13'(XW)) begin
      shifted   = '0;
      lost_mask = '1;
    end else begin
      shifted   = sig_x >> shift_raw;
      lost_mask = ~({XW{1'b1}} << shift_raw);
    end
  end

  assign mant      = shifted[XW-2 -: Man];
  assign guard     = shifted[XW-2-Man];
  assign sticky    = (|shifted[XW-3-Man:0]) | (|(sig_x & lost_mask)) | sticky_i;
  assign round_up  = guard & (sticky | mant[0]);
  assign exp_field = normal ? biased[Exp-1:0] : '0;
  assign rounded   = {1'b0, exp_field, mant} + {{(Width - 1) {1'b0}}, round_up};

  if (HasInf) begin : g_ovf_inf
    assign overflow = (biased >= ExpOnes) || (rounded[Width-2:0] >= InfField) || rounded[Width-1];
  end else begin : g_ovf_sat
    assign overflow = (biased > ExpOnes) || (rounded[Width-2:0] > MaxFiniteField) ||
                      rounded[Width-1];
  end

  always_comb begin
    if (nan_i || (inf_i && !HasInf)) begin
      y_o = CanonicalNan;
    end else if (inf_i) begin
      y_o = {sign_i, InfField};
    end else if (zero_i || ~|sig_i) begin
      y_o = {sign_i, {(Width - 1) {1'b0}}};
    end else if (overflow) begin
      y_o = {sign_i, HasInf ? InfField : MaxFiniteField};
    end else begin
      y_o = {sign_i, rounded[Width-2:0]};
    end
  end
endmodule
