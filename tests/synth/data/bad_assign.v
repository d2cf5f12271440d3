// A netlist OpenSTA 2019 rejects with a syntax error while still exiting 0 (docs/tools.md#known-pitfalls).
module bad_assign(a, b, y);
  input [1:0] a;
  input b;
  output [1:0] y;
  wire [1:0] t;
  assign {t[1], t[0]} = a;
  INVX1 u0 (.A(t[0]), .Y(y[0]));
  INVX1 u1 (.A(b), .Y(y[1]));
endmodule
