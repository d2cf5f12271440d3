// MAC tensor-core tile (baseline): M*N units, each a K-wide dot product of an activation row and
// a weight column, products rounded to the accumulator format and added k ascending. One beat per
// K-group; beats between in_first_i and in_last_i chain through the accumulator.
`include "ltc_pkg.sv"

module ltc_mac_tile #(
  parameter int M = 2, parameter int N = 64, parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16, parameter int WeightType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32, parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int AWidth = M * K * ltc_pkg::width(ActType),
  localparam int WWidth = N * K * ltc_pkg::width(WeightType)
) (
`include "ltc_tile_ports.svh"
);
  ltc_mac_core #(
    .M(M), .N(N), .K(K), .ActType(ActType), .WeightType(WeightType), .AccType(AccType),
    .OutType(OutType), .PipeStages(PipeStages)
  ) u_core (.*);

`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (ltc_pkg::is_float(ActType) != ltc_pkg::is_float(AccType) ||
      ltc_pkg::is_float(WeightType) != ltc_pkg::is_float(AccType)) begin : g_bad_types
    $error("ltc_mac_tile: ActType and WeightType must both be integers or both floats, as AccType");
  end
`endif
endmodule
