// Bit-serial plane scale: widens a table entry (or activation) to the accumulator format and
// multiplies it by 2^plane. Integers: sign extension and a wrapping shift; floats: an exponent add
// with overflow to infinity (ltc_fp_convert).

`include "ltc_pkg.sv"

module ltc_plane_scale #(
  parameter int InType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int PlaneWidth = 1,
  localparam int InWidth = ltc_pkg::width(InType),
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic [InWidth-1:0]    x_i,
  input  logic [PlaneWidth-1:0] plane_i,
  output logic [AccWidth-1:0]   y_o
);
  if (ltc_pkg::is_float(InType)) begin : g_float
    ltc_fp_convert #(
      .InType    (InType),
      .OutType   (AccType),
      .ScaleWidth(PlaneWidth)
    ) u_convert (
      .x_i    (x_i),
      .scale_i(plane_i),
      .y_o    (y_o)
    );
  end else begin : g_int
    logic [AccWidth-1:0] widened;
    assign widened = {{(AccWidth - InWidth) {x_i[InWidth-1]}}, x_i};
    assign y_o = widened << plane_i;
  end
endmodule
