// reg_adder's ports with a subtraction: the gate-level check must tell the two apart.
module reg_subber #(
  parameter int Width = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             valid_i,
  input  logic [Width-1:0] a_i,
  input  logic [Width-1:0] b_i,
  output logic [Width:0]   sum_o
);
  logic [Width-1:0] a_q, b_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      a_q   <= '0;
      b_q   <= '0;
      sum_o <= '0;
    end else if (valid_i) begin
      a_q   <= a_i;
      b_q   <= b_i;
      sum_o <= {1'b0, a_q} - {1'b0, b_q};
    end
  end
endmodule
