// The MAC baseline's K multipliers: prod_k = a_k * w_k rounded once to the accumulator format
// (exact for int8 x int8 -> int32 and fp16 x fp16 -> fp32).

`include "ltc_pkg.sv"

module ltc_mac_unit #(
  parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int WeightType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int WeightWidth = ltc_pkg::width(WeightType),
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic [K*ActWidth-1:0]    a_i,
  input  logic [K*WeightWidth-1:0] w_i,
  output logic [K*AccWidth-1:0]    prod_o
);
  for (genvar k = 0; k < K; k++) begin : g_mul
    if (ltc_pkg::is_float(AccType)) begin : g_float
      ltc_fp_mul #(
        .TypeA  (ActType),
        .TypeB  (WeightType),
        .OutType(AccType)
      ) u_mul (
        .a_i(a_i[k*ActWidth +: ActWidth]),
        .b_i(w_i[k*WeightWidth +: WeightWidth]),
        .y_o(prod_o[k*AccWidth +: AccWidth])
      );
    end else begin : g_int
      logic signed [AccWidth-1:0] a, w;
      assign a = AccWidth'($signed(a_i[k*ActWidth +: ActWidth]));
      assign w = AccWidth'($signed(w_i[k*WeightWidth +: WeightWidth]));
      assign prod_o[k*AccWidth +: AccWidth] = a * w;
    end
  end
endmodule
