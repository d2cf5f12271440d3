// Conventional LUT tile (the lut-naive baseline): M precompute units build full 2^K tables from
// the activations inside the tile; each of the M*N units selects an entry with the untransformed
// K-bit weight pattern (2^K:1, no offline transform) and accumulates it bit-serially.
`include "ltc_dtype.svh"

module ltc_lut_naive_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int ActType = 3,
  parameter int TableType = 3,
  parameter int AccType = 7,
  parameter int OutType = 7,
  parameter int PipeStages = 1,
  localparam int ActWidth = `LTC_DT_WIDTH(ActType),
  localparam int AccWidth = `LTC_DT_WIDTH(AccType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      in_valid_i,
  output logic                      in_ready_o,
  input  logic                      in_first_i,
  input  logic                      in_last_i,
  input  logic [M*K*ActWidth-1:0]   in_a_i,
  input  logic [N*K-1:0]            in_w_i,
  input  logic [M*N*AccWidth-1:0]   in_c_i,
  output logic                      out_valid_o,
  input  logic                      out_ready_i,
  output logic [M*N*OutWidth-1:0]   out_o,
  output logic                      done_o
);
  localparam int TableWidth = `LTC_DT_WIDTH(TableType);
  localparam int FullSize = 1 << K;
  localparam int PlaneWidth = (WBits > 1) ? $clog2(WBits) : 1;
  localparam int ScaleDepth = (PipeStages >= 2) ? 1 : 0;
  localparam int LookupDepth = (PipeStages >= 3) ? 1 : 0;
  localparam int InDepth = (PipeStages > 3) ? PipeStages - 3 : 0;

  logic                      advance, acc_en, acc_first;
  logic [PlaneWidth-1:0]     plane_in, plane_lookup, plane_scale;
  logic [M*K*ActWidth-1:0]   acts;
  logic [N*K-1:0]            patterns;
  logic [M*N*AccWidth-1:0]   c_add;

  ltc_tile_ctrl #(
    .Depth     (PipeStages - 1),
    .PlaneWidth(PlaneWidth)
  ) u_ctrl (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (in_valid_i),
    .in_first_i (in_first_i),
    .in_last_i  (in_last_i),
    .in_ready_o (in_ready_o),
    .plane_o    (plane_in),
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

  ltc_pipe_reg #(.Width(M * K * ActWidth + N * K + PlaneWidth), .Depth(InDepth)) u_in_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({in_a_i, in_w_i, plane_in}),
    .q_o  ({acts, patterns, plane_lookup})
  );

  ltc_pipe_reg #(.Width(PlaneWidth), .Depth(LookupDepth)) u_plane_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (plane_lookup),
    .q_o  (plane_scale)
  );

  // Results gathered by a loop, one slice write per unit: continuous slice assigns make the
  // simulator rebuild the whole output vector once per unit (quadratic in M*N).
  (* mem2reg *) logic [OutWidth-1:0] out_elems[M*N];
  always_comb begin
    for (int i = 0; i < M * N; i++) out_o[i*OutWidth +: OutWidth] = out_elems[i];
  end

  for (genvar m = 0; m < M; m++) begin : g_row
    logic [FullSize*TableWidth-1:0] full_table;

    ltc_full_table #(
      .K        (K),
      .ActType  (ActType),
      .TableType(TableType)
    ) u_precompute (
      .acts_i (acts[m*K*ActWidth +: K*ActWidth]),
      .table_o(full_table)
    );

    for (genvar n = 0; n < N; n++) begin : g_col
      logic [TableWidth-1:0] entry, entry_q;
      logic [AccWidth-1:0]   scaled, scaled_q;

      assign entry = full_table[patterns[n*K +: K]*TableWidth +: TableWidth];

      ltc_pipe_reg #(.Width(TableWidth), .Depth(LookupDepth)) u_entry_pipe (
        .clk_i(clk_i),
        .en_i (advance),
        .d_i  (entry),
        .q_o  (entry_q)
      );

      ltc_plane_scale #(
        .InType    (TableType),
        .AccType   (AccType),
        .PlaneWidth(PlaneWidth)
      ) u_scale (
        .x_i    (entry_q),
        .plane_i(plane_scale),
        .y_o    (scaled)
      );

      ltc_pipe_reg #(.Width(AccWidth), .Depth(ScaleDepth)) u_scaled_pipe (
        .clk_i(clk_i),
        .en_i (advance),
        .d_i  (scaled),
        .q_o  (scaled_q)
      );

      ltc_accumulator #(
        .AccType(AccType),
        .OutType(OutType)
      ) u_acc (
        .clk_i  (clk_i),
        .en_i   (acc_en),
        .first_i(acc_first),
        .c_i    (c_add[(m*N+n)*AccWidth +: AccWidth]),
        .x_i    (scaled_q),
        .out_o  (out_elems[m*N+n])
      );
    end
  end
endmodule
