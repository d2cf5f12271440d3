// The timed activity of ltc's gate-level simulator (gatesim.h, DelayModel): a hand-built
// ripple-carry adder whose glitches are counted by hand, and the liberty delay model's numbers
// against the liberty's tables.
#include "common/file_io.h"
#include "synth/cell_library.h"
#include "synth/gatesim.h"
#include "synth/liberty.h"
#include "synth/power.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ltc::synth {
namespace {

using nlohmann::json;
using test::scratch_dir;

// An n-bit ripple-carry adder from two-input osu018 cells: p = a ^ b, g = a & b, s = p ^ c,
// t = p & c, c' = g | t, carry in 0. Net ids: a 2.., b, p, g, t, c (c[0] the constant), s.
std::string ripple_adder(int n) {
  int next = 2;
  auto bus = [&](int width) {
    json bits = json::array();
    for (int i = 0; i < width; ++i) bits.push_back(next++);
    return bits;
  };
  const json a = bus(n), b = bus(n), p = bus(n), g = bus(n), t = bus(n), s = bus(n);
  json c = json::array({"0"});
  for (int i = 1; i <= n; ++i) c.push_back(next++);
  json cells = json::object();
  auto cell = [&](const std::string& name, const std::string& type, const json& x, const json& y,
                  const json& out) {
    cells[name] = {{"type", type}, {"connections", {{"A", {x}}, {"B", {y}}, {"Y", {out}}}}};
  };
  for (int i = 0; i < n; ++i) {
    cell(fmt::format("xp{}", i), "XOR2X1", a[i], b[i], p[i]);
    cell(fmt::format("ag{}", i), "AND2X2", a[i], b[i], g[i]);
    cell(fmt::format("xs{}", i), "XOR2X1", p[i], c[i], s[i]);
    cell(fmt::format("at{}", i), "AND2X2", p[i], c[i], t[i]);
    cell(fmt::format("oc{}", i), "OR2X2", g[i], t[i], c[i + 1]);
  }
  json top = {{"ports",
               {{"a", {{"direction", "input"}, {"bits", a}}},
                {"b", {{"direction", "input"}, {"bits", b}}},
                {"s", {{"direction", "output"}, {"bits", s}}},
                {"co", {{"direction", "output"}, {"bits", {c[n]}}}}}},
              {"cells", cells},
              {"netnames",
               {{"p", {{"bits", p}}},
                {"g", {{"bits", g}}},
                {"t", {{"bits", t}}},
                {"c", {{"bits", c}}},
                {"s", {{"bits", s}}}}}};
  return json{{"modules", {{"rca", top}}}}.dump();
}

std::vector<uint8_t> bits_of(uint32_t v, int n) {
  std::vector<uint8_t> b(n);
  for (int i = 0; i < n; ++i) b[i] = (v >> i) & 1;
  return b;
}

uint32_t value_of(const std::vector<uint8_t>& b) {
  uint32_t v = 0;
  for (size_t i = 0; i < b.size(); ++i) v |= uint32_t{b[i]} << i;
  return v;
}

// a steps 0111...1 -> 1000...0 with b = 1: every a bit flips at once. The propagate bits p fall
// (or rise) one delay later, the carries (all 1 before: 0111...1 + 1 = 1000...0) fall two or three
// delays later, so each sum bit above bit 0 sees p change before c: s[i] = p ^ c flips twice
// (a glitch) where the settled sum 1000...0 -> 1000...1 leaves it unchanged.
TEST(TimedActivity, RippleCarryAdderGlitchesCountedByHand) {
  constexpr int n = 8;
  const std::string path = scratch_dir("") + "/rca.json";
  write_text_atomic(path, ripple_adder(n));
  const auto cells = read_liberty_cells(kDefaultLiberty);
  for (const DelayModel model : {DelayModel::kZero, DelayModel::kUnit}) {
    GateSim sim(path, "rca", cells);
    if (model != DelayModel::kZero) sim.set_timing(model, cells);
    const uint32_t a0 = (1u << (n - 1)) - 1, a1 = 1u << (n - 1);
    sim.set_input("b", bits_of(1, n));
    sim.set_input("a", bits_of(a0, n));
    sim.step();
    EXPECT_EQ(value_of(sim.output("s")), a0 + 1);
    sim.count_toggles(true);
    sim.set_input("a", bits_of(a1, n));
    sim.step();
    EXPECT_EQ(value_of(sim.output("s")), a1 + 1);
    EXPECT_EQ(sim.output("co")[0], 0);
    const bool timed = model != DelayModel::kZero;
    SCOPED_TRACE(delay_model_name(model));
    auto at = [&](const char* bus, int i) { return fmt::format("{}[{}]", bus, i); };
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(sim.net_toggles(at("p", i), true), 1u) << i;
      EXPECT_EQ(sim.net_toggles(at("g", i), true), i == 0 ? 1u : 0u) << i;
      // Settled: only s[0] changes. Timed: s[i >= 1] rises after p, falls after c (or the reverse
      // at the top bit): two transitions each.
      EXPECT_EQ(sim.net_toggles(at("s", i), false), i == 0 ? 1u : 0u) << i;
      EXPECT_EQ(sim.net_toggles(at("s", i), true), i == 0 ? 1u : timed ? 2u : 0u) << i;
      // t[i] = p & c: 1 -> 0 for the middle bits; the top bit's p rises while c is still 1, a
      // pulse.
      const uint64_t t_settled = i >= 1 && i <= n - 2 ? 1 : 0;
      EXPECT_EQ(sim.net_toggles(at("t", i), false), t_settled) << i;
      EXPECT_EQ(sim.net_toggles(at("t", i), true), i == n - 1 && timed ? 2u : t_settled) << i;
    }
    for (int i = 1; i < n; ++i) {
      EXPECT_EQ(sim.net_toggles(at("c", i), true), 1u) << i;  // every carry falls once
    }
    // The carry out passes the top bit's pulse on: 0 -> 1 -> 0.
    EXPECT_EQ(sim.net_toggles(at("c", n), false), 0u);
    EXPECT_EQ(sim.net_toggles(at("c", n), true), timed ? 2u : 0u);
    const auto sums = sim.toggle_sums({"a", "b"}, {});
    // Nets: p 8, g 1, t 6 (+2 timed pulse on t[7]), c 7 (+2 on the carry out), s 1 (+2 x 7).
    EXPECT_EQ(sums.net_toggles, timed ? 23u + 2 + 2 + 14 : 23u);
    EXPECT_EQ(sums.input_toggles, uint64_t{n});
  }
}

// Liberty delays: the settled values agree with the zero-delay simulation on random operands,
// every net's extra transitions come in pairs (a glitch leaves the net where it was), and the
// adder glitches at least once.
TEST(TimedActivity, LibertyDelaysSettleToTheZeroDelayValues) {
  constexpr int n = 8;
  const std::string path = scratch_dir("") + "/rca.json";
  write_text_atomic(path, ripple_adder(n));
  const auto lib = power_library(kDefaultLiberty);
  GateSim zero(path, "rca", lib->cells), timed(path, "rca", lib->cells);
  timed.set_timing(DelayModel::kLiberty, lib->cells);
  zero.count_toggles(true);
  timed.count_toggles(true);
  uint32_t x = 12345;
  for (int k = 0; k < 200; ++k) {
    x = x * 1103515245u + 12345u;
    for (GateSim* s : {&zero, &timed}) {
      s->set_input("a", bits_of((x >> 8) & 0xff, n));
      s->set_input("b", bits_of((x >> 16) & 0xff, n));
      s->step();
    }
    ASSERT_EQ(value_of(zero.output("s")), value_of(timed.output("s"))) << k;
    ASSERT_EQ(zero.output("co"), timed.output("co")) << k;
  }
  uint64_t extra = 0;
  for (const char* bus : {"p", "g", "t", "s"}) {
    for (int i = 0; i < n; ++i) {
      const std::string net = fmt::format("{}[{}]", bus, i);
      EXPECT_EQ(timed.net_toggles(net, false), zero.net_toggles(net, false)) << net;
      const uint64_t all = timed.net_toggles(net, true), settled = timed.net_toggles(net, false);
      ASSERT_GE(all, settled) << net;
      EXPECT_EQ((all - settled) % 2, 0u) << net;
      extra += all - settled;
    }
  }
  EXPECT_GT(extra, 0u);
}

// A cell's liberty delay is the mean of cell_rise and cell_fall at its load and input slew, by
// hand from osu018's INVX1 tables (load index 0.005 / 0.0125 pF, slew index 0.06 / 0.18 ns,
// extrapolated linearly below 0.06 ns as OpenSTA does): port a -> INVX1 -> m -> INVX1 -> port y.
// First inverter: load = INVX1's A pin (0.00932196 + 0.00932456) / 2 = 0.00932326 pF, input slew
// 0 (a port): cell_fall 0.0337191, cell_rise 0.0334044 -> 0.0335617 ns = 33562 fs; its output slew
// (fall_transition 0.017003 + rise_transition 0.0255104) / 2 = 0.0212567 ns.
// Second: load 0.01 pF (the output port), slew 0.0212567: cell_fall 0.0365805, cell_rise
// 0.0389787 -> 0.0377796 ns = 37780 fs.
TEST(TimedActivity, LibertyDelayIsTheTablesAtTheLoadByHand) {
  const std::string path = scratch_dir("") + "/chain.json";
  write_text_atomic(path, R"({"modules": {"chain": {
    "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [4]}},
    "cells": {"i1": {"type": "INVX1", "connections": {"A": [2], "Y": [3]}},
              "i2": {"type": "INVX1", "connections": {"A": [3], "Y": [4]}}},
    "netnames": {"m": {"bits": [3]}, "y": {"bits": [4]}}}}})");
  const auto lib = power_library(kDefaultLiberty);
  GateSim sim(path, "chain", lib->cells);
  sim.set_timing(DelayModel::kLiberty, lib->cells, nullptr, 0.01);
  EXPECT_EQ(sim.output_delay("m"), 33562u);
  EXPECT_EQ(sim.output_delay("y"), 37780u);
  sim.set_timing(DelayModel::kUnit, lib->cells);
  EXPECT_EQ(sim.output_delay("y"), 1u);
}

}  // namespace
}  // namespace ltc::synth
