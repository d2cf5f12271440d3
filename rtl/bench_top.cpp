#include "rtl/bench_top.h"

#include "rtl/rtl_runner.h"

#include <sstream>

namespace ltc::rtl {

using hw::TensorCoreDesign;

std::string registered_input_top(const hw::TensorCoreConfig& c, const RtlDesign& d) {
  const int m = c.shape.m, n = c.shape.n, k = c.shape.k;
  const uint64_t a_bits = uint64_t(m) *
                          (c.design == TensorCoreDesign::kLut ? (1u << (k - 1)) : unsigned(k)) *
                          a_element_bits(c);
  const uint64_t w_bits = uint64_t(w_element_count(c)) * w_element_bits(c);
  const uint64_t c_bits = uint64_t(m) * n * golden::dtype_bits(c.acc);
  const uint64_t o_bits = uint64_t(m) * n * golden::dtype_bits(c.out);
  std::string params;
  for (const auto& p : d.params) {
    params += (params.empty() ? "." : ", .") + p.name + "(" + std::to_string(p.value) + ")";
  }
  std::ostringstream v;
  v << "module ltc_bench_top (\n"
    << "  input logic clk_i, rst_ni, in_valid_i, in_first_i, in_last_i, out_ready_i,\n"
    << "  input logic [" << a_bits - 1 << ":0] in_a_i,\n"
    << "  input logic [" << w_bits - 1 << ":0] in_w_i,\n"
    << "  input logic [" << c_bits - 1 << ":0] in_c_i,\n"
    << "  output logic in_ready_o, out_valid_o, done_o,\n"
    << "  output logic [" << o_bits - 1 << ":0] out_o\n);\n"
    << "  logic valid_q, first_q, last_q, ready_q;\n"
    << "  logic [" << a_bits - 1 << ":0] a_q;\n"
    << "  logic [" << w_bits - 1 << ":0] w_q;\n"
    << "  logic [" << c_bits - 1 << ":0] c_q;\n"
    << "  always_ff @(posedge clk_i) begin\n"
    << "    valid_q <= in_valid_i; first_q <= in_first_i; last_q <= in_last_i;\n"
    << "    ready_q <= out_ready_i; a_q <= in_a_i; w_q <= in_w_i; c_q <= in_c_i;\n"
    << "  end\n"
    << "  " << d.top << " #(" << params << ") u_tile (\n"
    << "    .clk_i, .rst_ni, .in_valid_i(valid_q), .in_ready_o, .in_first_i(first_q),\n"
    << "    .in_last_i(last_q), .in_a_i(a_q), .in_w_i(w_q), .in_c_i(c_q), .out_valid_o,\n"
    << "    .out_ready_i(ready_q), .out_o, .done_o);\n"
    << "endmodule\n";
  return v.str();
}

}  // namespace ltc::rtl
