// Tile control shared by every design: the operand handshake, the valid/first/last bits of the
// Depth datapath stages ahead of the accumulator, the plane counter and the result handshake.
// The whole pipeline advances together and stalls only while a finished result waits in the
// accumulator for out_ready_i, so LMMAs run back to back at one beat per cycle.
module ltc_tile_ctrl #(
  parameter int Depth = 0,
  parameter int PlaneWidth = 1
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  in_valid_i,
  input  logic                  in_first_i,
  input  logic                  in_last_i,
  output logic                  in_ready_o,
  output logic [PlaneWidth-1:0] plane_o,      // plane index of the incoming beat
  output logic                  advance_o,    // enable of every datapath register
  output logic                  acc_en_o,     // the accumulator takes a sum this cycle
  output logic                  acc_first_o,  // ... that starts from C
  input  logic                  out_ready_i,
  output logic                  out_valid_o,
  output logic                  done_o
);
  logic                  advance, acc_last_q, add_valid, add_first, add_last;
  logic [PlaneWidth-1:0] plane_q;

  assign advance    = ~acc_last_q | out_ready_i;
  assign in_ready_o = advance;
  assign advance_o  = advance;
  assign plane_o    = in_first_i ? '0 : plane_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      plane_q <= '0;
    end else if (in_valid_i && advance) begin
      plane_q <= plane_o + 1'b1;
    end
  end

  if (Depth == 0) begin : g_no_stages
    assign add_valid = in_valid_i;
    assign add_first = in_first_i;
    assign add_last  = in_last_i;
  end else begin : g_stages
    logic [Depth-1:0] valid_q, first_q, last_q;
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        valid_q <= '0;
        first_q <= '0;
        last_q  <= '0;
      end else if (advance) begin
        valid_q <= (valid_q << 1) | Depth'(in_valid_i);
        first_q <= (first_q << 1) | Depth'(in_first_i);
        last_q  <= (last_q << 1) | Depth'(in_last_i);
      end
    end
    assign add_valid = valid_q[Depth-1];
    assign add_first = first_q[Depth-1];
    assign add_last  = last_q[Depth-1];
  end

  assign acc_en_o    = advance & add_valid;
  assign acc_first_o = add_first;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      acc_last_q <= 1'b0;
    end else if (advance) begin
      acc_last_q <= add_valid & add_last;
    end
  end

  assign out_valid_o = acc_last_q;
  assign done_o      = acc_last_q & out_ready_i;

`ifdef VERILATOR  // checked in the Verilator models (--assert); Yosys and Icarus do not read them
  if (Depth < 0) begin : g_bad_depth
    $error("ltc_tile_ctrl: Depth (PipeStages - 1) must be at least 0");
  end

  // The result handshake (rtl/README.md): a result stays valid until it is taken, the tile takes a
  // beat exactly when no result waits or the waiting one leaves, and done marks the taking.
  a_out_held : assert property (@(posedge clk_i) disable iff (!rst_ni)
                                out_valid_o && !out_ready_i |=> out_valid_o)
    else $error("ltc_tile_ctrl: out_valid_o fell before out_ready_i took the result");
  a_ready : assert property (@(posedge clk_i) disable iff (!rst_ni)
                             in_ready_o == (!out_valid_o || out_ready_i))
    else $error("ltc_tile_ctrl: in_ready_o is not !out_valid_o | out_ready_i");
  a_done : assert property (@(posedge clk_i) disable iff (!rst_ni)
                            done_o == (out_valid_o && out_ready_i))
    else $error("ltc_tile_ctrl: done_o is not out_valid_o & out_ready_i");
  // Nothing moves while a result waits: the accumulators keep it, the plane counter stands.
  a_stall : assert property (@(posedge clk_i) disable iff (!rst_ni)
                             !advance_o |-> !acc_en_o)
    else $error("ltc_tile_ctrl: an accumulator took a sum while the tile was stalled");
  a_plane_held : assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  !(in_valid_i && advance_o) |=> $stable(plane_q))
    else $error("ltc_tile_ctrl: the plane counter moved without an accepted beat");
`endif
endmodule
