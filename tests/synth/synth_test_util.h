// Shared helpers of the synth tests: a scratch folder per test and the tiny test design.
#pragma once

#include "synth/design_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace ltc::synth::test {

inline std::string scratch_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ltc_synth_test_" + std::to_string(::getpid())) /
                                    (std::string(info->test_suite_name()) + "." + info->name() +
                                     (name.empty() ? "" : "." + name));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Cell areas read from a liberty's text by a regex, independently of ltc's parser and of yosys's
// stat.
inline std::map<std::string, double> liberty_text_areas(const std::string& text) {
  std::istringstream in(text);
  std::string line, cell;
  std::map<std::string, double> areas;
  const std::regex cell_re(R"(^\s*cell\s*\(\s*(\w+)\s*\))"), area_re(R"(^\s*area\s*:\s*([0-9.]+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, cell_re))
      cell = m[1];
    else if (!cell.empty() && std::regex_search(line, m, area_re) && !areas.count(cell))
      areas[cell] = std::stod(m[1]);
  }
  return areas;
}

inline DesignSource reg_adder(int width, const std::string& module = "reg_adder") {
  DesignSource s;
  s.top = module;
  s.params = {{"Width", std::to_string(width)}};
  s.sources = {std::string(LTC_SYNTH_TEST_DATA) + "/" + module + ".v"};
  s.clock_port = "clk_i";
  return s;
}

}  // namespace ltc::synth::test
