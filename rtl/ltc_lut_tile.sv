// LUT tensor core tile M x N x K (SPEC §3): M half tables, each entry broadcast to N units; N
// transformed K-bit weight patterns, each broadcast to M units; M*N LUT units, each with a
// bit-serial accumulator. One beat per weight plane (b = 0, 1, ... from the first beat).
`include "ltc_dtype.svh"

module ltc_lut_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int TableType = 3,
  parameter int AccType = 7,
  parameter int OutType = 7,
  parameter int PipeStages = 1,
  localparam int TableWidth = `LTC_DT_WIDTH(TableType),
  localparam int AccWidth = `LTC_DT_WIDTH(AccType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType),
  localparam int HalfSize = 1 << (K - 1)
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  input  logic                           in_valid_i,
  output logic                           in_ready_o,
  input  logic                           in_first_i,
  input  logic                           in_last_i,
  input  logic [M*HalfSize*TableWidth-1:0] in_a_i,
  input  logic [N*K-1:0]                 in_w_i,
  input  logic [M*N*AccWidth-1:0]        in_c_i,
  output logic                           out_valid_o,
  input  logic                           out_ready_i,
  output logic [M*N*OutWidth-1:0]        out_o,
  output logic                           done_o
);
  localparam int PlaneWidth = (WBits > 1) ? $clog2(WBits) : 1;
  // Register placement for PipeStages: before the accumulator add, then after the lookup, then
  // at the operands.
  localparam int ScaleDepth = (PipeStages >= 2) ? 1 : 0;
  localparam int LookupDepth = (PipeStages >= 3) ? 1 : 0;
  localparam int InDepth = (PipeStages > 3) ? PipeStages - 3 : 0;
  localparam int TablesWidth = M * HalfSize * TableWidth;

  logic                        advance, acc_en, acc_first;
  logic [PlaneWidth-1:0]       plane_in, plane_lookup, plane_scale;
  logic [TablesWidth-1:0]      tables;
  logic [N*K-1:0]              patterns;
  logic [M*N*AccWidth-1:0]     c_add;

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

  // C travels with its beat to the accumulator.
  ltc_pipe_reg #(.Width(M * N * AccWidth), .Depth(PipeStages - 1)) u_c_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (in_c_i),
    .q_o  (c_add)
  );

  ltc_pipe_reg #(.Width(TablesWidth + N * K + PlaneWidth), .Depth(InDepth)) u_in_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({in_a_i, in_w_i, plane_in}),
    .q_o  ({tables, patterns, plane_lookup})
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
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [TableWidth-1:0] entry, entry_q;
      logic [AccWidth-1:0]   scaled, scaled_q;

      ltc_lut_unit #(
        .K        (K),
        .TableType(TableType)
      ) u_lut (
        .table_i  (tables[m*HalfSize*TableWidth +: HalfSize*TableWidth]),
        .pattern_i(patterns[n*K +: K]),
        .entry_o  (entry)
      );

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
