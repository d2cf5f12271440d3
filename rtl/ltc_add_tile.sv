// ADD-based bit-serial tile (Stripes-like baseline): per plane, each of the M*N units adds the
// activations whose weight bit is set, one add per bit, k ascending, each activation widened and
// scaled by 2^b (shared per row). Same interface and beat protocol as ltc_lut_tile.
`include "ltc_pkg.sv"

module ltc_add_tile #(
  parameter int M = 2, parameter int N = 64, parameter int K = 4, parameter int WBits = 4,
  parameter int ActType = ltc_pkg::FP16, parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32, parameter int PipeStages = 1,
  localparam int AWidth = M * K * ltc_pkg::width(ActType), localparam int WWidth = N * K
) (
`include "ltc_tile_ports.svh"
);
  localparam int ActWidth = ltc_pkg::width(ActType);
  localparam int AccWidth = ltc_pkg::width(AccType);
  localparam int PlaneWidth = ltc_pkg::plane_width(WBits);

`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (ltc_pkg::is_float(ActType) != ltc_pkg::is_float(AccType)) begin : g_bad_act
    $error("ltc_add_tile: ActType must be an integer for an INT32 AccType, else a float");
  end
`endif

  logic                      advance;
  logic [PlaneWidth-1:0]     plane;
  logic [M*K*ActWidth-1:0]   acts;
  logic [N*K-1:0]            patterns, patterns_add;
  logic [M*K*AccWidth-1:0]   scaled, scaled_add;
  logic [M*N*K*AccWidth-1:0] terms;
  logic [M*N*K-1:0]          enables;

  // Stages: after the shared scale, then the operands.
  ltc_tile_shell #(
    .M(M), .N(N), .K(K), .Planes(WBits), .AccType(AccType), .OutType(OutType),
    .PipeStages(PipeStages), .InnerStages(2), .AWidth(AWidth), .WWidth(WWidth), .Terms(K),
    .Gated(1'b1)
  ) u_shell (
    .*,
    .advance_o(advance),
    .a_o      (acts),
    .w_o      (patterns),
    .plane_o  (plane),
    .terms_i  (terms),
    .enables_i(enables)
  );

  for (genvar i = 0; i < M * K; i++) begin : g_scale
    ltc_plane_scale #(
      .InType    (ActType),
      .AccType   (AccType),
      .PlaneWidth(PlaneWidth)
    ) u_scale (
      .x_i    (acts[i*ActWidth +: ActWidth]),
      .plane_i(plane),
      .y_o    (scaled[i*AccWidth +: AccWidth])
    );
  end

  ltc_pipe_reg #(.Width(M * K * AccWidth + N * K), .Depth((PipeStages >= 2) ? 1 : 0)) u_scaled_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({scaled, patterns}),
    .q_o  ({scaled_add, patterns_add})
  );

  // Unit m*N+n adds row m's scaled activations where column n's weight bits are set.
  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      assign terms[(m*N+n)*K*AccWidth +: K*AccWidth] = scaled_add[m*K*AccWidth +: K*AccWidth];
      assign enables[(m*N+n)*K +: K] = patterns_add[n*K +: K];
    end
  end
endmodule
