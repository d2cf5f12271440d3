// The MAC tiles' M x N multipliers: for element m*N+n, K products of activation row m and weight
// column n rounded to the accumulator format (ltc_mac_unit), and a register after them
// (PipeStages >= 2).
module ltc_mac_array #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int WeightType = ltc_pkg::FP16,
  parameter int AccType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int WeightWidth = ltc_pkg::width(WeightType),
  localparam int AccWidth = ltc_pkg::width(AccType)
) (
  input  logic                       clk_i,
  input  logic                       en_i,
  input  logic [M*K*ActWidth-1:0]    acts_i,
  input  logic [N*K*WeightWidth-1:0] weights_i,
  output logic [M*N*K*AccWidth-1:0]  prods_o
);
  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [K*AccWidth-1:0] prods;

      ltc_mac_unit #(
        .K         (K),
        .ActType   (ActType),
        .WeightType(WeightType),
        .AccType   (AccType)
      ) u_mul (
        .a_i   (acts_i[m*K*ActWidth +: K*ActWidth]),
        .w_i   (weights_i[n*K*WeightWidth +: K*WeightWidth]),
        .prod_o(prods)
      );

      ltc_pipe_reg #(.Width(K * AccWidth), .Depth((PipeStages >= 2) ? 1 : 0)) u_prod_pipe (
        .clk_i(clk_i),
        .en_i (en_i),
        .d_i  (prods),
        .q_o  (prods_o[(m*N+n)*K*AccWidth +: K*AccWidth])
      );
    end
  end
endmodule
