// Conventional LUT tile (the lut-naive baseline): M precompute units build full 2^K tables from
// the activations inside the tile; each of the M*N units selects an entry with the untransformed
// K-bit weight pattern (2^K:1, no offline transform) and accumulates it bit-serially.
module ltc_lut_naive_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int TableType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int ActWidth = ltc_pkg::width(ActType),
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
  input  logic [N*K-1:0]          in_w_i,
  input  logic [M*N*AccWidth-1:0] in_c_i,
  output logic                    out_valid_o,
  input  logic                    out_ready_i,
  output logic [M*N*OutWidth-1:0] out_o,
  output logic                    done_o
);
  localparam int TableWidth = ltc_pkg::width(TableType);
  localparam int FullSize = 1 << K;
  localparam int PlaneWidth = ltc_pkg::plane_width(WBits);

`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (ltc_pkg::is_float(ActType) != ltc_pkg::is_float(TableType) ||
      ltc_pkg::width(ActType) > TableWidth) begin : g_bad_table
    $error("ltc_lut_naive_tile: TableType must hold ActType exactly");
  end
`endif

  logic                    advance;
  logic [PlaneWidth-1:0]   plane;
  logic [M*K*ActWidth-1:0] acts;
  logic [N*K-1:0]          patterns;
  logic [M*N*AccWidth-1:0] terms;

  // Stages: after the scale, after the lookup (ltc_lut_lane), then the operands.
  ltc_tile_shell #(
    .M          (M),
    .N          (N),
    .K          (K),
    .Planes     (WBits),
    .AccType    (AccType),
    .OutType    (OutType),
    .PipeStages (PipeStages),
    .InnerStages(3),
    .OpWidth    (M * K * ActWidth + N * K),
    .PlaneDepth ((PipeStages >= 3) ? 1 : 0)
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
    .op_o       ({acts, patterns}),
    .plane_o    (plane),
    .terms_i    (terms),
    .enables_i  ('1)
  );

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
      ltc_lut_lane #(
        .TableType (TableType),
        .AccType   (AccType),
        .PlaneWidth(PlaneWidth),
        .PipeStages(PipeStages)
      ) u_lane (
        .clk_i  (clk_i),
        .en_i   (advance),
        .entry_i(full_table[patterns[n*K +: K]*TableWidth +: TableWidth]),
        .plane_i(plane),
        .term_o (terms[(m*N+n)*AccWidth +: AccWidth])
      );
    end
  end
endmodule
