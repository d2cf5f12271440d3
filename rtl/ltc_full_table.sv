// The conventional LUT's precompute unit: all 2^K entries T[p] = sum_k (2 p_k - 1) a_k from K
// activations, in the table format, k ascending with one rounded add per step. Entries sharing
// their low bits share the partial sums (a prefix tree: 2^2 + ... + 2^K adders).

`include "ltc_pkg.sv"

module ltc_full_table #(
  parameter int K = 4,
  parameter int ActType = ltc_pkg::FP16,
  parameter int TableType = ltc_pkg::FP16,
  localparam int ActWidth = ltc_pkg::width(ActType),
  localparam int TableWidth = ltc_pkg::width(TableType)
) (
  input  logic [K*ActWidth-1:0]          acts_i,
  output logic [(1<<K)*TableWidth-1:0]   table_o
);
  localparam int Entries = (1 << (K + 1)) - 2;  // all levels: 2 + 4 + ... + 2^K
  localparam int TW = TableWidth;

  logic [K*TW-1:0]       pos, neg;
  logic [Entries*TW-1:0] level  /*verilator split_var*/;

  for (genvar k = 0; k < K; k++) begin : g_act
    logic [ActWidth-1:0] act;
    logic [TW-1:0]       conv;
    assign act = acts_i[k*ActWidth +: ActWidth];
    if (ActType == TableType) begin : g_same
      assign conv = act;
    end else if (ltc_pkg::is_float(TableType)) begin : g_float
      ltc_fp_convert #(
        .InType    (ActType),
        .OutType   (TableType),
        .ScaleWidth(1)
      ) u_convert (
        .x_i    (act),
        .scale_i(1'b0),
        .y_o    (conv)
      );
    end else begin : g_int
      assign conv = {{(TW - ActWidth) {act[ActWidth-1]}}, act};
    end
    assign pos[k*TW +: TW] = conv;
    if (ltc_pkg::is_float(TableType)) begin : g_neg_float
      assign neg[k*TW +: TW] = {~conv[TW-1], conv[TW-2:0]};
    end else begin : g_neg_int
      assign neg[k*TW +: TW] = -conv;
    end
  end

  // Level k (entries for patterns of k+1 bits) starts at entry 2^(k+1) - 2.
  assign level[0 +: TW]  = neg[0 +: TW];
  assign level[TW +: TW] = pos[0 +: TW];
  for (genvar k = 1; k < K; k++) begin : g_level
    for (genvar p = 0; p < (1 << (k + 1)); p++) begin : g_entry
      localparam int Prev = (1 << k) - 2 + (p % (1 << k));
      localparam int Here = (1 << (k + 1)) - 2 + p;
      ltc_acc_add #(.AccType(TableType)) u_add (
        .a_i(level[Prev*TW +: TW]),
        .b_i(((p >> k) % 2 == 1) ? pos[k*TW +: TW] : neg[k*TW +: TW]),
        .y_o(level[Here*TW +: TW])
      );
    end
  end

  assign table_o = level[((1 << K) - 2)*TW +: (1 << K)*TW];
endmodule
