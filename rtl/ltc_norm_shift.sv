// Normalization shifter: shifts x left until its MSB is 1 and returns the shift (the leading-zero
// count), as a log-depth shifter. x == 0 gives y == 0.
module ltc_norm_shift #(
  parameter int Width = 8
) (
  input  logic [Width-1:0] x_i,
  output logic [Width-1:0] y_o,
  output logic [7:0]       count_o
);
  localparam int Levels = $clog2(Width);

  always_comb begin
    y_o = x_i;
    count_o = '0;
    for (int i = Levels - 1; i >= 0; i--) begin
      // Shift by 2^i when the top 2^i bits are all zero.
      if ((y_o & ~({Width{1'b1}} >> (1 << i))) == '0) begin
        y_o = y_o << (1 << i);
        count_o[i] = 1'b1;
      end
    end
  end
endmodule
