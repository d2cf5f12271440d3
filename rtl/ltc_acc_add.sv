// Accumulator adder: wrapping two's complement add for int32, IEEE add (RNE) for floats.

`include "ltc_pkg.sv"

module ltc_acc_add #(
  parameter int AccType = ltc_pkg::FP32,
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic [AccWidth-1:0] a_i,
  input  logic [AccWidth-1:0] b_i,
  output logic [AccWidth-1:0] y_o
);
  if (ltc_pkg::is_float(AccType)) begin : g_float
    ltc_fp_add #(.Type(AccType)) u_add (
      .a_i(a_i),
      .b_i(b_i),
      .y_o(y_o)
    );
  end else begin : g_int
    assign y_o = a_i + b_i;
  end
endmodule
