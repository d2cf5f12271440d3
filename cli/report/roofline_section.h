// Report sections from the tile-level model (model/roofline): the H200 GEMM calibration, and the
// paper's end-to-end figures (Table I, Table III, Figure 16 trend, the BitLLM decode effect)
// beside ours, each row with the `ltc` command that reproduces it.
#pragma once

#include <string>

namespace ltc::report {

std::string roofline_calibration_html(std::string* csv);
std::string roofline_table1_html(std::string* csv);
std::string roofline_table3_html(std::string* csv);
std::string roofline_fig16_html(std::string* csv);
std::string roofline_bitllm_html(std::string* csv);

}  // namespace ltc::report
