// The MAC tiles' datapath (ltc_mac_tile; ltc_mac_dequant_tile with CodeBits > 0): the tile shell,
// the weights (as given, or dequantized after the operand registers, one ltc_dequant_unit per
// (n, k) shared by the M rows), and per element m*N+n the K products of activation row m and
// weight column n rounded to the accumulator format (ltc_mac_unit), a register after them
// (PipeStages >= 2), added k ascending by the shell's accumulator.
`include "ltc_pkg.sv"

module ltc_mac_core #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int WeightType = ltc_pkg::FP16,  // with CodeBits > 0: the dequantized format
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  // 0: in_w_i holds N*K weights. 1..8: N*K codes of CodeBits bits, then N FP16 scales, then N
  // zero points of CodeBits bits (rtl/README.md).
  parameter int CodeBits = 0,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int WeightWidth = ltc_pkg::width(WeightType),
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int AWidth = M * K * ActWidth,
  localparam int WWidth = (CodeBits == 0) ? N * K * WeightWidth : N * (K * CodeBits + 16 + CodeBits)
) (
`include "ltc_tile_ports.svh"
);
  logic                      advance, unused_plane;
  logic [AWidth-1:0]         acts;
  logic [WWidth-1:0]         wq;
  logic [N*K*WeightWidth-1:0] weights;
  logic [M*N*K*AccWidth-1:0] prods;

  // Stages: after the multipliers, then the operands (which carry the codes: dequantization is
  // in the multipliers' stage).
  ltc_tile_shell #(
    .M(M), .N(N), .K(K), .AccType(AccType), .OutType(OutType), .PipeStages(PipeStages),
    .InnerStages(2), .AWidth(AWidth), .WWidth(WWidth), .Terms(K)
  ) u_shell (
    .*,
    .advance_o(advance),
    .a_o      (acts),
    .w_o      (wq),
    .plane_o  (unused_plane),
    .terms_i  (prods),
    .enables_i({M * N * K{1'b1}})
  );

  if (CodeBits == 0) begin : g_weights
    assign weights = wq;
  end else begin : g_dequant
    localparam int Codes = N * K * CodeBits;
    localparam int Scales = N * 16;
    for (genvar n = 0; n < N; n++) begin : g_col
      for (genvar k = 0; k < K; k++) begin : g_k
        ltc_dequant_unit #(
          .WBits  (CodeBits),
          .OutType(WeightType)
        ) u_dequant (
          .code_i (wq[(n*K+k)*CodeBits +: CodeBits]),
          .zero_i (wq[Codes+Scales+n*CodeBits +: CodeBits]),
          .scale_i(wq[Codes+n*16 +: 16]),
          .w_o    (weights[(n*K+k)*WeightWidth +: WeightWidth])
        );
      end
    end
  end

  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [K*AccWidth-1:0] prods_d;

      ltc_mac_unit #(
        .K         (K),
        .ActType   (ActType),
        .WeightType(WeightType),
        .AccType   (AccType)
      ) u_mul (
        .a_i   (acts[m*K*ActWidth +: K*ActWidth]),
        .w_i   (weights[n*K*WeightWidth +: K*WeightWidth]),
        .prod_o(prods_d)
      );

      ltc_pipe_reg #(.Width(K * AccWidth), .Depth((PipeStages >= 2) ? 1 : 0)) u_prod_pipe (
        .clk_i(clk_i),
        .en_i (advance),
        .d_i  (prods_d),
        .q_o  (prods[(m*N+n)*K*AccWidth +: K*AccWidth])
      );
    end
  end
endmodule
