// The LUT tiles' datapath (ltc_lut_tile; ltc_lut_naive_tile with Precompute): the tile shell, the
// table entry each unit m*N+n selects with column n's K-bit weight pattern, and the LUT lane from
// the entry to the accumulator's term. The tables are either given (in_a_i: M half tables of
// 2^(K-1) entries, selected and negated by ltc_lut_unit) or built in the tile from in_a_i's
// activations (M full tables of 2^K entries, ltc_full_table, selected 2^K:1).
`include "ltc_pkg.sv"

module ltc_lut_core #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter bit Precompute = 1'b0,
  parameter int ActType = ltc_pkg::FP16,  // with Precompute
  parameter int TableType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int TableWidth = ltc_pkg::width(TableType),
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int HalfSize = 1 << (K - 1),
  localparam int AWidth = Precompute ? M * K * ActWidth : M * HalfSize * TableWidth,
  localparam int WWidth = N * K
) (
`include "ltc_tile_ports.svh"
);
  localparam int PlaneWidth = ltc_pkg::plane_width(WBits);

  logic                    advance;
  logic [PlaneWidth-1:0]   plane;
  logic [AWidth-1:0]       a;
  logic [N*K-1:0]          patterns;
  logic [M*N*AccWidth-1:0] terms;

  // Stages: after the scale, after the lookup (ltc_lut_lane), then the operands.
  ltc_tile_shell #(
    .M(M), .N(N), .K(K), .Planes(WBits), .AccType(AccType), .OutType(OutType),
    .PipeStages(PipeStages), .InnerStages(3), .AWidth(AWidth), .WWidth(WWidth),
    .PlaneDepth((PipeStages >= 3) ? 1 : 0)
  ) u_shell (
    .*,
    .advance_o(advance),
    .a_o      (a),
    .w_o      (patterns),
    .plane_o  (plane),
    .terms_i  (terms),
    .enables_i({M * N{1'b1}})
  );

  localparam int RowEntries = Precompute ? 2 * HalfSize : HalfSize;

  for (genvar m = 0; m < M; m++) begin : g_row
    logic [RowEntries*TableWidth-1:0] row_table;  // row m's full or half table

    if (Precompute) begin : g_precompute
      ltc_full_table #(
        .K        (K),
        .ActType  (ActType),
        .TableType(TableType)
      ) u_precompute (
        .acts_i (a[m*K*ActWidth +: K*ActWidth]),
        .table_o(row_table)
      );
    end else begin : g_given
      assign row_table = a[m*HalfSize*TableWidth +: HalfSize*TableWidth];
    end

    for (genvar n = 0; n < N; n++) begin : g_col
      logic [TableWidth-1:0] entry;

      if (Precompute) begin : g_full
        assign entry = row_table[patterns[n*K +: K]*TableWidth +: TableWidth];
      end else begin : g_half
        ltc_lut_unit #(
          .K        (K),
          .TableType(TableType)
        ) u_lut (
          .table_i  (row_table),
          .pattern_i(patterns[n*K +: K]),
          .entry_o  (entry)
        );
      end

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
