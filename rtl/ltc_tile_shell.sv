// What every tile top shares (rtl/README.md, "Ports"): the handshakes, stage valids and plane
// counter (ltc_tile_ctrl), the operand registers, C travelling with its beat, one accumulator per
// output element and the results gathered onto out_o. A top connects its ports to the same-named
// ones here (.*) and returns, per element m*N+n, the Terms terms its datapath computes from a_o
// and w_o.
//
// Stages: PipeStages registers from the operand ports to the accumulator, the accumulator
// included. The top's datapath holds InnerStages of them (its own registers and the accumulator);
// the rest go on the operands.
`include "ltc_pkg.sv"

module ltc_tile_shell #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,       // activations per dot product (checked here for every top)
  parameter int Planes = 1,  // weight planes an LMMA may have (sizes the plane counter)
  parameter int AccType = ltc_pkg::FP32,
  parameter int OutType = ltc_pkg::FP32,
  parameter int PipeStages = 1,
  parameter int InnerStages = 1,
  parameter int AWidth = 1,  // in_a_i
  parameter int WWidth = 1,  // in_w_i
  parameter int PlaneDepth = 0,  // plane registers after the operand registers
  parameter int Terms = 1,
  parameter bit Gated = 1'b0,    // see ltc_accumulator
  localparam int AccWidth = ltc_pkg::width(AccType),
  localparam int OutWidth = ltc_pkg::width(OutType),
  localparam int PlaneWidth = ltc_pkg::plane_width(Planes)
) (
  output logic                          advance_o,  // enable of the top's datapath registers
  output logic [AWidth-1:0]             a_o,        // in_a_i after the operand registers
  output logic [WWidth-1:0]             w_o,        // in_w_i after the operand registers
  output logic [PlaneWidth-1:0]         plane_o,    // their plane index, PlaneDepth registers later
  input  logic [M*N*Terms*AccWidth-1:0] terms_i,
  input  logic [M*N*Terms-1:0]          enables_i,
`include "ltc_tile_ports.svh"
);
  localparam int OpDepth = (PipeStages > InnerStages) ? PipeStages - InnerStages : 0;

  // Parameter ranges: a clear elaboration error in Verilator and Yosys instead of a wrong netlist.
`ifndef __ICARUS__  // Icarus Verilog 11 has no elaboration-time $error
  if (K < 1 || K > 8) begin : g_bad_k
    $error("ltc tile: K must be 1..8");
  end
  if (Planes < 1 || Planes > 8) begin : g_bad_wbits
    $error("ltc tile: WBits must be 1..8");
  end
  if (PipeStages < 1) begin : g_bad_stages
    $error("ltc tile: PipeStages must be at least 1");
  end
  if (!ltc_pkg::is_acc(AccType)) begin : g_bad_acc
    $error("ltc tile: AccType must be INT32, FP16 or FP32");
  end
  if (ltc_pkg::is_float(AccType) ? !ltc_pkg::is_float(OutType) : OutType != AccType)
  begin : g_bad_out
    $error("ltc tile: OutType must equal an INT32 AccType, or be a float for a float AccType");
  end
`endif

  logic                  advance, acc_en, acc_first;
  logic [PlaneWidth-1:0] plane_in, plane_op;
  logic [M*N*AccWidth-1:0] c_add;

  ltc_tile_ctrl #(
    .Depth     (PipeStages - 1),
    .PlaneWidth(PlaneWidth)
  ) u_ctrl (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (in_valid_i),
    .in_first_i (in_first_i),
    .in_last_i  (in_last_i),
    .in_ready_o (in_ready_o),
    .plane_o    (plane_in),
    .advance_o  (advance),
    .acc_en_o   (acc_en),
    .acc_first_o(acc_first),
    .out_ready_i(out_ready_i),
    .out_valid_o(out_valid_o),
    .done_o     (done_o)
  );
  assign advance_o = advance;

  // C travels with its beat to the accumulator.
  ltc_pipe_reg #(.Width(M * N * AccWidth), .Depth(PipeStages - 1)) u_c_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (in_c_i),
    .q_o  (c_add)
  );

  ltc_pipe_reg #(.Width(AWidth + WWidth + PlaneWidth), .Depth(OpDepth)) u_in_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({in_a_i, in_w_i, plane_in}),
    .q_o  ({a_o, w_o, plane_op})
  );

  ltc_pipe_reg #(.Width(PlaneWidth), .Depth(PlaneDepth)) u_plane_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (plane_op),
    .q_o  (plane_o)
  );

  // Results gathered by a loop, one slice write per unit: continuous slice assigns make the
  // simulator rebuild the whole output vector once per unit (quadratic in M*N).
  (* mem2reg *) logic [OutWidth-1:0] out_elems[M*N];
  always_comb begin
    for (int i = 0; i < M * N; i++) out_o[i*OutWidth +: OutWidth] = out_elems[i];
  end

  for (genvar i = 0; i < M * N; i++) begin : g_acc
    ltc_accumulator #(
      .Terms  (Terms),
      .Gated  (Gated),
      .AccType(AccType),
      .OutType(OutType)
    ) u_acc (
      .clk_i    (clk_i),
      .en_i     (acc_en),
      .first_i  (acc_first),
      .c_i      (c_add[i*AccWidth +: AccWidth]),
      .terms_i  (terms_i[i*Terms*AccWidth +: Terms*AccWidth]),
      .enables_i(enables_i[i*Terms +: Terms]),
      .out_o    (out_elems[i])
    );
  end

`ifdef VERILATOR  // checked in the Verilator models (--assert), see ltc_tile_ctrl
  a_out_stable : assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  out_valid_o && !out_ready_i |=> $stable(out_o))
    else $error("ltc tile: out_o changed while its result waited for out_ready_i");
`endif
endmodule
