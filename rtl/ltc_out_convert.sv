// Accumulator to output format: a wire when they match, else one RNE conversion.

`include "ltc_pkg.sv"

module ltc_out_convert #(
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic [AccWidth-1:0] acc_i,
  output logic [OutWidth-1:0] out_o
);
  if (AccType == OutType) begin : g_same
    assign out_o = acc_i;
  end else begin : g_convert
    ltc_fp_convert #(
      .InType    (AccType),
      .OutType   (OutType),
      .ScaleWidth(1)
    ) u_convert (
      .x_i    (acc_i),
      .scale_i(1'b0),
      .y_o    (out_o)
    );
  end
endmodule
