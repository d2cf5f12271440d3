// LUT unit: selects one of the 2^(K-1) half-table entries with the low K-1 weight bits and negates
// it when the top bit is set. Weights are transformed offline, so there is no index inversion.

`include "ltc_pkg.sv"

module ltc_lut_unit #(
  parameter int K = 4,
  parameter int TableType = ltc_pkg::FP16,
  localparam int TableWidth = ltc_pkg::width(TableType),
  localparam int HalfSize = 1 << (K - 1)
) (
  input  logic [HalfSize*TableWidth-1:0] table_i,
  input  logic [K-1:0]                   pattern_i,
  output logic [TableWidth-1:0]          entry_o
);
  logic [TableWidth-1:0] selected, negated;

  if (K == 1) begin : g_single
    assign selected = table_i;
  end else begin : g_mux
    assign selected = table_i[pattern_i[K-2:0]*TableWidth +: TableWidth];
  end

  // Integers wrap (-(-128) = -128 in int8); floats flip the sign (NaN is canonicalized later).
  if (ltc_pkg::is_float(TableType)) begin : g_float
    assign negated = {~selected[TableWidth-1], selected[TableWidth-2:0]};
  end else begin : g_int
    assign negated = -selected;
  end

  assign entry_o = pattern_i[K-1] ? negated : selected;
endmodule
