// One output element's accumulator: acc = (first ? C : acc) + x, and the output conversion.
`include "ltc_dtype.svh"

module ltc_accumulator #(
  parameter int AccType = 7,
  parameter int OutType = 7,
  localparam int AccWidth = `LTC_DT_WIDTH(AccType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType)
) (
  input  logic                clk_i,
  input  logic                en_i,
  input  logic                first_i,
  input  logic [AccWidth-1:0] c_i,
  input  logic [AccWidth-1:0] x_i,
  output logic [OutWidth-1:0] out_o
);
  logic [AccWidth-1:0] acc_q, sum;

  ltc_acc_add #(.AccType(AccType)) u_add (
    .a_i(first_i ? c_i : acc_q),
    .b_i(x_i),
    .y_o(sum)
  );

  always_ff @(posedge clk_i) begin
    if (en_i) acc_q <= sum;
  end

  ltc_out_convert #(
    .AccType(AccType),
    .OutType(OutType)
  ) u_out (
    .acc_i(acc_q),
    .out_o(out_o)
  );
endmodule
