// Shared helpers of the synth tests: a scratch folder per test and the tiny test design.
#pragma once

#include "synth/design_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

inline DesignSource reg_adder(int width, const std::string& module = "reg_adder") {
  DesignSource s;
  s.top = module;
  s.params = {{"Width", std::to_string(width)}};
  s.sources = {std::string(LTC_SYNTH_TEST_DATA) + "/" + module + ".v"};
  s.clock_port = "clk_i";
  return s;
}

}  // namespace ltc::synth::test
