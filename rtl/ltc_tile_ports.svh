// The ports of every tile top and of ltc_tile_shell (rtl/README.md, "Ports"), included in their
// port lists. The module declares M, N, AccType, OutType and the widths AWidth, WWidth of in_a_i
// and in_w_i.
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  logic                    in_valid_i,
  output logic                    in_ready_o,
  input  logic                    in_first_i,
  input  logic                    in_last_i,
  input  logic [AWidth-1:0]                         in_a_i,
  input  logic [WWidth-1:0]       in_w_i,
  input  logic [M*N*ltc_pkg::width(AccType)-1:0] in_c_i,
  output logic                    out_valid_o,
  input  logic                    out_ready_i,
  output logic [M*N*ltc_pkg::width(OutType)-1:0] out_o,
  output logic                    done_o
