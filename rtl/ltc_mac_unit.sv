// The MAC baseline's K multipliers: prod_k = a_k * w_k rounded once to the accumulator format
// (exact for int8 x int8 -> int32 and fp16 x fp16 -> fp32).
`include "ltc_dtype.svh"

module ltc_mac_unit #(
  parameter int K = 4,
  parameter int ActType = 3,
  parameter int WeightType = 3,
  parameter int AccType = 7,
  localparam int ActWidth = `LTC_DT_WIDTH(ActType),
  localparam int WeightWidth = `LTC_DT_WIDTH(WeightType),
  localparam int AccWidth = `LTC_DT_WIDTH(AccType)
) (
  input  logic [K*ActWidth-1:0]    a_i,
  input  logic [K*WeightWidth-1:0] w_i,
  output logic [K*AccWidth-1:0]    prod_o
);
  for (genvar k = 0; k < K; k++) begin : g_mul
    if (`LTC_DT_IS_FLOAT(AccType)) begin : g_float
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
