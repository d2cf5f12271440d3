// Chain of K conditional adds in the accumulator format, k ascending: y = acc, then
// y = y + term_k for every k whose enable bit is set (a clear bit skips the add, so -0 stays -0).
// The ADD baseline's unit (terms: scaled activations, enables: a weight plane) and the MAC
// baseline's accumulation (terms: products, all enabled).

`include "ltc_pkg.sv"

module ltc_add_unit #(
  parameter int K = 4,
  parameter int AccType = ltc_pkg::FP32,
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic [AccWidth-1:0]   acc_i,
  input  logic [K*AccWidth-1:0] terms_i,
  input  logic [K-1:0]          enables_i,
  output logic [AccWidth-1:0]   y_o
);
  logic [(K+1)*AccWidth-1:0] chain  /*verilator split_var*/;

  assign chain[AccWidth-1:0] = acc_i;
  for (genvar k = 0; k < K; k++) begin : g_term
    logic [AccWidth-1:0] sum;
    ltc_acc_add #(.AccType(AccType)) u_add (
      .a_i(chain[k*AccWidth +: AccWidth]),
      .b_i(terms_i[k*AccWidth +: AccWidth]),
      .y_o(sum)
    );
    assign chain[(k+1)*AccWidth +: AccWidth] = enables_i[k] ? sum : chain[k*AccWidth +: AccWidth];
  end
  assign y_o = chain[K*AccWidth +: AccWidth];
endmodule
