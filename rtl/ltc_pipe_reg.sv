// Delay line of Depth enabled registers (Depth 0: a wire). Datapath stages have no reset: the
// control's valid bits say which contents mean anything.
module ltc_pipe_reg #(
  parameter int Width = 1,
  parameter int Depth = 1
) (
  input  logic             clk_i,
  input  logic             en_i,
  input  logic [Width-1:0] d_i,
  output logic [Width-1:0] q_o
);
  if (Depth == 0) begin : g_wire
    logic unused_clk_en;
    assign unused_clk_en = clk_i ^ en_i;
    assign q_o = d_i;
  end else begin : g_regs
    logic [Depth*Width-1:0] q;
    always_ff @(posedge clk_i) begin
      if (en_i) begin
        q[Width-1:0] <= d_i;
        for (int i = 1; i < Depth; i++) q[i*Width +: Width] <= q[(i-1)*Width +: Width];
      end
    end
    assign q_o = q[(Depth-1)*Width +: Width];
  end
endmodule
