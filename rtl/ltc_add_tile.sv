// ADD-based bit-serial tile (Stripes-like baseline): per plane, each of the M*N units adds the
// activations whose weight bit is set, one add per bit, k ascending, each activation widened and
// scaled by 2^b (shared per row). Same interface and beat protocol as ltc_lut_tile.
`include "ltc_dtype.svh"

module ltc_add_tile #(
  parameter int M = 2,
  parameter int N = 64,
  parameter int K = 4,
  parameter int WBits = 4,
  parameter int ActType = 3,
  parameter int AccType = 7,
  parameter int OutType = 7,
  parameter int PipeStages = 1,
  localparam int ActWidth = `LTC_DT_WIDTH(ActType),
  localparam int AccWidth = `LTC_DT_WIDTH(AccType),
  localparam int OutWidth = `LTC_DT_WIDTH(OutType)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      in_valid_i,
  output logic                      in_ready_o,
  input  logic                      in_first_i,
  input  logic                      in_last_i,
  input  logic [M*K*ActWidth-1:0]   in_a_i,
  input  logic [N*K-1:0]            in_w_i,
  input  logic [M*N*AccWidth-1:0]   in_c_i,
  output logic                      out_valid_o,
  input  logic                      out_ready_i,
  output logic [M*N*OutWidth-1:0]   out_o,
  output logic                      done_o
);
  localparam int PlaneWidth = (WBits > 1) ? $clog2(WBits) : 1;
  // Register placement: after the shared scale, then at the operands.
  localparam int ScaleDepth = (PipeStages >= 2) ? 1 : 0;
  localparam int InDepth = (PipeStages > 2) ? PipeStages - 2 : 0;

  logic                      advance, acc_en, acc_first;
  logic [PlaneWidth-1:0]     plane_in, plane_scale;
  logic [M*K*ActWidth-1:0]   acts;
  logic [N*K-1:0]            patterns, patterns_add;
  logic [M*K*AccWidth-1:0]   scaled, scaled_add;
  logic [M*N*AccWidth-1:0]   c_add;

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

  ltc_pipe_reg #(.Width(M * N * AccWidth), .Depth(PipeStages - 1)) u_c_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  (in_c_i),
    .q_o  (c_add)
  );

  ltc_pipe_reg #(.Width(M * K * ActWidth + N * K + PlaneWidth), .Depth(InDepth)) u_in_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({in_a_i, in_w_i, plane_in}),
    .q_o  ({acts, patterns, plane_scale})
  );

  for (genvar i = 0; i < M * K; i++) begin : g_scale
    ltc_plane_scale #(
      .InType    (ActType),
      .AccType   (AccType),
      .PlaneWidth(PlaneWidth)
    ) u_scale (
      .x_i    (acts[i*ActWidth +: ActWidth]),
      .plane_i(plane_scale),
      .y_o    (scaled[i*AccWidth +: AccWidth])
    );
  end

  ltc_pipe_reg #(.Width(M * K * AccWidth + N * K), .Depth(ScaleDepth)) u_scaled_pipe (
    .clk_i(clk_i),
    .en_i (advance),
    .d_i  ({scaled, patterns}),
    .q_o  ({scaled_add, patterns_add})
  );

  // Results gathered by a loop, one slice write per unit: continuous slice assigns make the
  // simulator rebuild the whole output vector once per unit (quadratic in M*N).
  (* mem2reg *) logic [OutWidth-1:0] out_elems[M*N];
  always_comb begin
    for (int i = 0; i < M * N; i++) out_o[i*OutWidth +: OutWidth] = out_elems[i];
  end

  for (genvar m = 0; m < M; m++) begin : g_row
    for (genvar n = 0; n < N; n++) begin : g_col
      logic [AccWidth-1:0] acc_q, sum;

      logic [AccWidth-1:0] c_elem, c_load;
      assign c_elem = c_add[(m*N+n)*AccWidth +: AccWidth];
      // With every weight bit 0 no add happens, so C itself reaches the output: give a NaN C the
      // canonical encoding the adders (and the golden model's output conversion) produce.
      if (`LTC_DT_IS_FLOAT(AccType)) begin : g_canon
        localparam int Exp = `LTC_DT_EXP(AccType);
        localparam int Man = `LTC_DT_MAN(AccType);
        logic c_nan;
        if (`LTC_DT_HAS_INF(AccType)) begin : g_ieee
          assign c_nan  = (&c_elem[AccWidth-2 -: Exp]) & (|c_elem[Man-1:0]);
          assign c_load = c_nan ? {1'b0, {Exp{1'b1}}, 1'b1, {(Man - 1) {1'b0}}} : c_elem;
        end else begin : g_e4m3
          assign c_nan  = &c_elem[AccWidth-2:0];
          assign c_load = c_nan ? {1'b0, {(AccWidth - 1) {1'b1}}} : c_elem;
        end
      end else begin : g_int
        assign c_load = c_elem;
      end

      ltc_add_unit #(
        .K      (K),
        .AccType(AccType)
      ) u_unit (
        .acc_i    (acc_first ? c_load : acc_q),
        .terms_i  (scaled_add[m*K*AccWidth +: K*AccWidth]),
        .enables_i(patterns_add[n*K +: K]),
        .y_o      (sum)
      );

      always_ff @(posedge clk_i) begin
        if (acc_en) acc_q <= sum;
      end

      ltc_out_convert #(
        .AccType(AccType),
        .OutType(OutType)
      ) u_out (
        .acc_i(acc_q),
        .out_o(out_elems[m*N+n])
      );
    end
  end
endmodule
