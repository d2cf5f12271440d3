// The LUT tiles' path from a looked-up table entry to the accumulator's term: an optional register
// after the lookup (PipeStages >= 3), the plane scale widen(entry) x 2^plane, and an optional
// register after it (PipeStages >= 2). plane_i is the plane index at the scale.
`include "ltc_pkg.sv"

module ltc_lut_lane #(
  parameter int TableType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int PlaneWidth = 1,
  parameter int PipeStages = 1,
  localparam int TableWidth = ltc_pkg::width(TableType),
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic                  clk_i,
  input  logic                  en_i,
  input  logic [TableWidth-1:0] entry_i,
  input  logic [PlaneWidth-1:0] plane_i,
  output logic [AccWidth-1:0]   term_o
);
  logic [TableWidth-1:0] entry_q;
  logic [AccWidth-1:0]   scaled;

  ltc_pipe_reg #(.Width(TableWidth), .Depth((PipeStages >= 3) ? 1 : 0)) u_entry_pipe (
    .clk_i(clk_i),
    .en_i (en_i),
    .d_i  (entry_i),
    .q_o  (entry_q)
  );

  ltc_plane_scale #(
    .InType    (TableType),
    .AccType   (AccType),
    .PlaneWidth(PlaneWidth)
  ) u_scale (
    .x_i    (entry_q),
    .plane_i(plane_i),
    .y_o    (scaled)
  );

  ltc_pipe_reg #(.Width(AccWidth), .Depth((PipeStages >= 2) ? 1 : 0)) u_scaled_pipe (
    .clk_i(clk_i),
    .en_i (en_i),
    .d_i  (scaled),
    .q_o  (term_o)
  );
endmodule
