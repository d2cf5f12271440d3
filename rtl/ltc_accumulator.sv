// One output element's accumulator: acc = (first ? C : acc) + the Terms terms, k ascending, and the
// output conversion. One term is one add (the LUT tiles); several go through ltc_add_unit (the MAC
// products; the ADD tile's activations, Gated by the weight plane).
`include "ltc_pkg.sv"

module ltc_accumulator #(
  parameter int Terms = 1,
  // Terms are added only where enables_i is set. With every enable clear, C itself reaches the
  // output, so a NaN C gets the canonical encoding the adders (and the golden model) produce.
  parameter bit Gated = 1'b0,
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType)
) (
  input  logic                      clk_i,
  input  logic                      en_i,
  input  logic                      first_i,
  input  logic [AccWidth-1:0]       c_i,
  input  logic [Terms*AccWidth-1:0] terms_i,
  input  logic [Terms-1:0]          enables_i,
  output logic [OutWidth-1:0]       out_o
);
  logic [AccWidth-1:0] acc_q, c_load, sum;

  if (Gated && ltc_pkg::is_float(AccType)) begin : g_canon
    localparam int Exp = ltc_pkg::exp_bits(AccType);
    localparam int Man = ltc_pkg::man_bits(AccType);
    logic c_nan;
    if (ltc_pkg::has_inf(AccType)) begin : g_ieee
      assign c_nan  = (&c_i[AccWidth-2 -: Exp]) & (|c_i[Man-1:0]);
      assign c_load = c_nan ? {1'b0, {Exp{1'b1}}, 1'b1, {(Man - 1) {1'b0}}} : c_i;
    end else begin : g_e4m3
      assign c_nan  = &c_i[AccWidth-2:0];
      assign c_load = c_nan ? {1'b0, {(AccWidth - 1) {1'b1}}} : c_i;
    end
  end else begin : g_raw
    assign c_load = c_i;
  end

  if (Terms == 1 && !Gated) begin : g_one
    logic unused_enables;
    assign unused_enables = ^enables_i;
    ltc_acc_add #(.AccType(AccType)) u_add (
      .a_i(first_i ? c_load : acc_q),
      .b_i(terms_i),
      .y_o(sum)
    );
  end else begin : g_chain
    ltc_add_unit #(
      .K      (Terms),
      .AccType(AccType)
    ) u_add (
      .acc_i    (first_i ? c_load : acc_q),
      .terms_i  (terms_i),
      .enables_i(Gated ? enables_i : {Terms{1'b1}}),
      .y_o      (sum)
    );
  end

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
