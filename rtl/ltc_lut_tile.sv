// LUT tensor core tile M x N x K (SPEC §3): M half tables, each entry broadcast to N units; N
// transformed K-bit weight patterns, each broadcast to M units; M*N LUT units, each with a
// bit-serial accumulator. One beat per weight plane (b = 0, 1, ... from the first beat).
module ltc_lut_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int TableType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int TableWidth = ltc_pkg::width(TableType),
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType),
  localparam int HalfSize = 1 << (K - 1)
) (
  input  logic                             clk_i,
  input  logic                             rst_ni,
  input  logic                             in_valid_i,
  output logic                             in_ready_o,
  input  logic                             in_first_i,
  input  logic                             in_last_i,
  input  logic [M*HalfSize*TableWidth-1:0] in_a_i,
  input  logic [N*K-1:0]                   in_w_i,
  input  logic [M*N*AccWidth-1:0]          in_c_i,
  output logic                             out_valid_o,
  input  logic                             out_ready_i,
  output logic [M*N*OutWidth-1:0]          out_o,
  output logic                             done_o
);
  localparam int PlaneWidth = ltc_pkg::plane_width(WBits);
  localparam int TablesWidth = M * HalfSize * TableWidth;

`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (TableType == ltc_pkg::INT32 || TableType == ltc_pkg::FP32 ||
      ltc_pkg::is_float(TableType) != ltc_pkg::is_float(AccType)) begin : g_bad_table
    $error("ltc_lut_tile: TableType must be an 8- or 16-bit format, float with a float AccType");
  end
`endif

  logic                    advance;
  logic [PlaneWidth-1:0]   plane;
  logic [TablesWidth-1:0]  tables;
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
    .OpWidth    (TablesWidth + N * K),
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
    .op_o       ({tables, patterns}),
    .plane_o    (plane),
    .terms_i    (terms),
    .enables_i  ('1)
  );

  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [TableWidth-1:0] entry;

      ltc_lut_unit #(
        .K        (K),
        .TableType(TableType)
      ) u_lut (
        .table_i  (tables[m*HalfSize*TableWidth +: HalfSize*TableWidth]),
        .pattern_i(patterns[n*K +: K]),
        .entry_o  (entry)
      );

      ltc_lut_lane #(
        .TableType (TableType),
        .AccType   (AccType),
        .PlaneWidth(PlaneWidth),
        .PipeStages(PipeStages)
      ) u_lane (
        .clk_i  (clk_i),
        .en_i   (advance),
        .entry_i(entry),
        .plane_i(plane),
        .term_o (terms[(m*N+n)*AccWidth +: AccWidth])
      );
    end
  end
endmodule
