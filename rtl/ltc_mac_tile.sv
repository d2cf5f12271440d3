// MAC tensor-core tile (baseline): M*N units, each a K-wide dot product of an activation row and
// a weight column, products rounded to the accumulator format and added k ascending. One beat per
// K-group; beats between in_first_i and in_last_i chain through the accumulator.
module ltc_mac_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int WeightType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int WeightWidth = ltc_pkg::width(WeightType),
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       in_valid_i,
  output logic                       in_ready_o,
  input  logic                       in_first_i,
  input  logic                       in_last_i,
  input  logic [M*K*ActWidth-1:0]    in_a_i,
  input  logic [N*K*WeightWidth-1:0] in_w_i,
  input  logic [M*N*AccWidth-1:0]    in_c_i,
  output logic                       out_valid_o,
  input  logic                       out_ready_i,
  output logic [M*N*OutWidth-1:0]    out_o,
  output logic                       done_o
);
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (ltc_pkg::is_float(ActType) != ltc_pkg::is_float(AccType) ||
      ltc_pkg::is_float(WeightType) != ltc_pkg::is_float(AccType)) begin : g_bad_types
    $error("ltc_mac_tile: ActType and WeightType must both be integers or both floats, as AccType");
  end
`endif

  logic                         advance, unused_plane;
  logic [M*K*ActWidth-1:0]      acts;
  logic [N*K*WeightWidth-1:0]   weights;
  logic [M*N*K*AccWidth-1:0]    prods;

  // Stages: after the multipliers, then the operands.
  ltc_tile_shell #(
    .M          (M),
    .N          (N),
    .K          (K),
    .AccType    (AccType),
    .OutType    (OutType),
    .PipeStages (PipeStages),
    .InnerStages(2),
    .OpWidth    (M * K * ActWidth + N * K * WeightWidth),
    .Terms      (K)
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
    .op_o       ({acts, weights}),
    .plane_o    (unused_plane),
    .terms_i    (prods),
    .enables_i  ('1)
  );

  ltc_mac_array #(
    .M         (M),
    .N         (N),
    .K         (K),
    .ActType   (ActType),
    .WeightType(WeightType),
    .AccType   (AccType),
    .PipeStages(PipeStages)
  ) u_array (
    .clk_i    (clk_i),
    .en_i     (advance),
    .acts_i   (acts),
    .weights_i(weights),
    .prods_o  (prods)
  );
endmodule
