// Conventional LUT tile (the lut-naive baseline): M precompute units build full 2^K tables from
// the activations inside the tile; each of the M*N units selects an entry with the untransformed
// K-bit weight pattern (2^K:1, no offline transform) and accumulates it bit-serially.
`include "ltc_pkg.sv"

module ltc_lut_naive_tile #(
  parameter int M = 2, parameter int N = 64, parameter int K = 4, parameter int WBits = 4,
  parameter int ActType = ltc_pkg::FP16, parameter int TableType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32, parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int AWidth = M * K * ltc_pkg::width(ActType), localparam int WWidth = N * K
) (
`include "ltc_tile_ports.svh"
);
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (ltc_pkg::is_float(ActType) != ltc_pkg::is_float(TableType) ||
      ltc_pkg::width(ActType) > ltc_pkg::width(TableType)) begin : g_bad_table
    $error("ltc_lut_naive_tile: TableType must hold ActType exactly");
  end
`endif

  ltc_lut_core #(
    .M(M), .N(N), .K(K), .WBits(WBits), .Precompute(1'b1), .ActType(ActType),
    .TableType(TableType), .AccType(AccType), .OutType(OutType), .PipeStages(PipeStages)
  ) u_core (.*);
endmodule
