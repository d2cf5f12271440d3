// MAC tensor-core tile with the dequantize-then-MAC front end (W_INTn x A_float mpGEMM): each beat
// brings WBits-bit weight codes and, per column n, an FP16 scale and an unsigned zero point; N*K
// dequantize units turn them into ActType weights (scale * (code - zero), one rounding), broadcast
// to the M rows, and the MAC array of ltc_mac_tile follows (products rounded to the accumulator,
// added k ascending). One beat per K-group; in_first_i .. in_last_i chain through the accumulator.
//
// in_w_i: N*K codes (element n*K+k, WBits each), then N scales (FP16, element n), then N zero
// points (WBits each, element n).
`include "ltc_pkg.sv"

module ltc_mac_dequant_tile #(
  parameter int M = 2, parameter int N = 64, parameter int K = 4, parameter int WBits = 4,
  parameter int ActType = ltc_pkg::FP16, parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32, parameter int PipeStages = 1,
  localparam int AWidth = M * K * ltc_pkg::width(ActType),
  localparam int WWidth = N * (K * WBits + 16 + WBits)
) (
`include "ltc_tile_ports.svh"
);
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (!ltc_pkg::is_float(ActType) || !ltc_pkg::is_float(AccType) || WBits < 1 || WBits > 8)
  begin : g_bad_types
    $error("ltc_mac_dequant_tile: ActType and AccType must be floats, WBits 1..8");
  end
`endif

  ltc_mac_core #(
    .M(M), .N(N), .K(K), .ActType(ActType), .WeightType(ActType), .AccType(AccType),
    .OutType(OutType), .PipeStages(PipeStages), .CodeBits(WBits)
  ) u_core (.*);
endmodule
