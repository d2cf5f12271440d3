// MAC tensor-core tile with the dequantize-then-MAC front end (W_INTn x A_float mpGEMM): each beat
// brings WBits-bit weight codes and, per column n, an FP16 scale and an unsigned zero point; N*K
// dequantize units turn them into ActType weights (scale * (code - zero), one rounding), broadcast
// to the M rows, and the MAC array of ltc_mac_tile follows (products rounded to the accumulator,
// added k ascending). One beat per K-group; in_first_i .. in_last_i chain through the accumulator.
//
// in_w_i: N*K codes (element n*K+k, WBits each), then N scales (FP16, element n), then N zero
// points (WBits each, element n).
`include "ltc_dtype.svh"

module ltc_mac_dequant_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int ActType = 3,
  parameter int AccType = 7,
  parameter int OutType = 7,
  parameter int PipeStages = 1,
  localparam int ActWidth = `LTC_DT_WIDTH(ActType),
  localparam int WeightWidth = `LTC_DT_WIDTH(ActType),
  localparam int CodeBits = N * K * WBits,
  localparam int ScaleBits = N * 16,
  localparam int WPortWidth = CodeBits + ScaleBits + N * WBits,
  localparam int AccWidth = `LTC_DT_WIDTH(AccType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType)
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  input  logic                        in_valid_i,
  output logic                        in_ready_o,
  input  logic                        in_first_i,
  input  logic                        in_last_i,
  input  logic [M*K*ActWidth-1:0]     in_a_i,
  input  logic [WPortWidth-1:0]       in_w_i,
  input  logic [M*N*AccWidth-1:0]     in_c_i,
  output logic                        out_valid_o,
  input  logic                        out_ready_i,
  output logic [M*N*OutWidth-1:0]     out_o,
  output logic                        done_o
);
  // Register placement: after the multipliers, then at the operands.
  localparam int ProdDepth = (PipeStages >= 2) ? 1 : 0;
  localparam int InDepth = (PipeStages > 2) ? PipeStages - 2 : 0;

  logic                          advance, acc_en, acc_first;
  logic                          unused_plane;
  logic [M*K*ActWidth-1:0]       acts;
  logic [WPortWidth-1:0]         wq;
  logic [N*K*WeightWidth-1:0]    weights;
  logic [M*N*AccWidth-1:0]       c_add;

  ltc_tile_ctrl #(
    .Depth     (PipeStages - 1),
    .PlaneWidth(1)
  ) u_ctrl (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (in_valid_i),
    .in_first_i (in_first_i),
    .in_last_i  (in_last_i),
    .in_ready_o (in_ready_o),
    .plane_o    (unused_plane),
    .advance_o  (advance),
    .acc_en_o   (acc_en),
    .acc_first_o(acc_first),
    .out_ready_i(out_ready_i),
    .out_valid_o(out_valid_o),
    .done_o     (done_o)
  );

  ltc_pipe_reg #(.Width(M * N * AccWidth), .Depth(PipeStages - 1)) u_c_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (in_c_i),
    .q_o  (c_add)
  );

  // The operand registers carry the codes; dequantization is in the multipliers' stage.
  ltc_pipe_reg #(.Width(M * K * ActWidth + WPortWidth), .Depth(InDepth)) u_in_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({in_a_i, in_w_i}),
    .q_o  ({acts, wq})
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
        .w_o    (weights[(n*K+k)*WeightWidth +: WeightWidth])
      );
    end
  end

  // Results gathered by a loop, one slice write per unit: continuous slice assigns make the
  // simulator rebuild the whole output vector once per unit (quadratic in M*N).
  (* mem2reg *) logic [OutWidth-1:0] out_elems[M*N];
  always_comb begin
    for (int i = 0; i < M * N; i++) out_o[i*OutWidth +: OutWidth] = out_elems[i];
  end

  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [K*AccWidth-1:0] prods, prods_q;
      logic [AccWidth-1:0]   acc_q, sum;

      ltc_mac_unit #(
        .K         (K),
        .ActType   (ActType),
        .WeightType(ActType),
        .AccType   (AccType)
      ) u_mul (
        .a_i   (acts[m*K*ActWidth +: K*ActWidth]),
        .w_i   (weights[n*K*WeightWidth +: K*WeightWidth]),
        .prod_o(prods)
      );

      ltc_pipe_reg #(.Width(K * AccWidth), .Depth(ProdDepth)) u_prod_pipe (
        .clk_i(clk_i),
        .en_i (advance),
        .d_i  (prods),
        .q_o  (prods_q)
      );

      ltc_add_unit #(
        .K      (K),
        .AccType(AccType)
      ) u_sum (
        .acc_i    (acc_first ? c_add[(m*N+n)*AccWidth +: AccWidth] : acc_q),
        .terms_i  (prods_q),
        .enables_i({K{1'b1}}),
        .y_o      (sum)
      );

      always_ff @(posedge clk_i) begin
        if (acc_en) acc_q <= sum;
      end

      ltc_out_convert #(
        .AccType(AccType),
        .OutType(OutType)
      ) u_out (
        .acc_i(acc_q),
        .out_o(out_elems[m*N+n])
      );
    end
  end
endmodule
