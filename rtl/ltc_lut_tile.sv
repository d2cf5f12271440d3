// LUT tensor core tile M x N x K (docs/hardware.md#tile): M half tables, each entry broadcast to N
// units; N transformed K-bit weight patterns, each broadcast to M units; M*N LUT units, each with a
// bit-serial accumulator. One beat per weight plane (b = 0, 1, ... from the first beat).
`include "ltc_pkg.sv"

module ltc_lut_tile #(
  parameter int M = 2, parameter int N = 64, parameter int K = 4, parameter int WBits = 4,
  parameter int TableType = ltc_pkg::FP16, parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32, parameter int PipeStages = 1,
  localparam int AWidth = M * (1 << (K - 1)) * ltc_pkg::width(TableType),
  localparam int WWidth = N * K
) (
`include "ltc_tile_ports.svh"
);
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (TableType == ltc_pkg::INT32 || TableType == ltc_pkg::FP32 ||
      ltc_pkg::is_float(TableType) != ltc_pkg::is_float(AccType)) begin : g_bad_table
    $error("ltc_lut_tile: TableType must be an 8- or 16-bit format, float with a float AccType");
  end
`endif

  ltc_lut_core #(
    .M(M), .N(N), .K(K), .WBits(WBits), .TableType(TableType), .AccType(AccType),
    .OutType(OutType), .PipeStages(PipeStages)
  ) u_core (.*);
endmodule
