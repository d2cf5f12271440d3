// Accumulator adder: wrapping two's complement add for int32, IEEE add (RNE) for floats.
`include "ltc_dtype.svh"

module ltc_acc_add #(
  parameter int AccType = 7,
  localparam int AccWidth = `LTC_DT_WIDTH(AccType)
) (
  input  logic [AccWidth-1:0] a_i,
  input  logic [AccWidth-1:0] b_i,
  output logic [AccWidth-1:0] y_o
);
  if (`LTC_DT_IS_FLOAT(AccType)) begin : g_float
    ltc_fp_add #(.Type(AccType)) u_add (
      .a_i(a_i),
      .b_i(b_i),
      .y_o(y_o)
    );
  end else begin : g_int
    assign y_o = a_i + b_i;
  end
endmodule
