// MAC tensor-core tile with the dequantize-then-MAC front end (W_INTn x A_float mpGEMM): each beat
// brings WBits-bit weight codes and, per column n, an FP16 scale and an unsigned zero point; N*K
// dequantize units turn them into ActType weights (scale * (code - zero), one rounding), broadcast
// to the M rows, and the MAC array of ltc_mac_tile follows (products rounded to the accumulator,
// added k ascending). One beat per K-group; in_first_i .. in_last_i chain through the accumulator.
//
// in_w_i: N*K codes (element n*K+k, WBits each), then N scales (FP16, element n), then N zero
// points (WBits each, element n).
module ltc_mac_dequant_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int CodeBits = N * K * WBits,
  localparam int ScaleBits = N * 16,
  localparam int WPortWidth = CodeBits + ScaleBits + N * WBits,
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  logic                    in_valid_i,
  output logic                    in_ready_o,
  input  logic                    in_first_i,
  input  logic                    in_last_i,
  input  logic [M*K*ActWidth-1:0] in_a_i,
  input  logic [WPortWidth-1:0]   in_w_i,
  input  logic [M*N*AccWidth-1:0] in_c_i,
  output logic                    out_valid_o,
  input  logic                    out_ready_i,
  output logic [M*N*OutWidth-1:0] out_o,
  output logic                    done_o
);
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (!ltc_pkg::is_float(ActType) || !ltc_pkg::is_float(AccType) || WBits < 1 || WBits > 8)
  begin : g_bad_types
    $error("ltc_mac_dequant_tile: ActType and AccType must be floats, WBits 1..8");
  end
`endif

  logic                      advance, unused_plane;
  logic [M*K*ActWidth-1:0]   acts;
  logic [WPortWidth-1:0]     wq;
  logic [N*K*ActWidth-1:0]   weights;
  logic [M*N*K*AccWidth-1:0] prods;

  // Stages: after the multipliers, then the operands (which carry the codes: dequantization is
  // in the multipliers' stage).
  ltc_tile_shell #(
    .M          (M),
    .N          (N),
    .K          (K),
    .AccType    (AccType),
    .OutType    (OutType),
    .PipeStages (PipeStages),
    .InnerStages(2),
    .OpWidth    (M * K * ActWidth + WPortWidth),
    .Terms      (K)
  ) u_shell (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (in_valid_i),
    .in_ready_o (in_ready_o),
    .in_first_i (in_first_i),
    .in_last_i  (in_last_i),
    .in_op_i    ({in_a_i, in_w_i}),
    .in_c_i     (in_c_i),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_o      (out_o),
    .done_o     (done_o),
    .advance_o  (advance),
    .op_o       ({acts, wq}),
    .plane_o    (unused_plane),
    .terms_i    (prods),
    .enables_i  ('1)
  );

  for (genvar n = 0; n < N; n++) begin : g_dequant
    for (genvar k = 0; k < K; k++) begin : g_k
      ltc_dequant_unit #(
        .WBits  (WBits),
        .OutType(ActType)
      ) u_dequant (
        .code_i (wq[(n*K+k)*WBits +: WBits]),
        .zero_i (wq[CodeBits+ScaleBits+n*WBits +: WBits]),
        .scale_i(wq[CodeBits+n*16 +: 16]),
        .w_o    (weights[(n*K+k)*ActWidth +: ActWidth])
      );
    end
  end

  ltc_mac_array #(
    .M         (M),
    .N         (N),
    .K         (K),
    .ActType   (ActType),
    .WeightType(ActType),
    .AccType   (AccType),
    .PipeStages(PipeStages)
  ) u_array (
    .clk_i    (clk_i),
    .en_i     (advance),
    .acts_i   (acts),
    .weights_i(weights),
    .prods_o  (prods)
  );
endmodule
