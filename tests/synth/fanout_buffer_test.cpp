// The fanout-buffering pass across kept modules (synth/fanout_buffer.h) and the timing-driven
// mapping it completes (yosys_flow.h).
#include "synth/fanout_buffer.h"

#include "common/file_io.h"
#include "synth/gatesim.h"
#include "synth/liberty.h"
#include "synth/yosys_flow.h"
#include "synth_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

namespace ltc::synth {
namespace {

using nlohmann::json;
using test::scratch_dir;

// A top whose input `s` feeds `copies` instances of a child module, each reading it on two cells.
json broadcast_design(int copies) {
  json child = {{"ports",
                 {{"a", {{"direction", "input"}, {"bits", {2}}}},
                  {"y", {{"direction", "output"}, {"bits", {3, 4}}}}}},
                {"cells",
                 {{"i0",
                   {{"type", "INVX1"},
                    {"port_directions", {{"A", "input"}, {"Y", "output"}}},
                    {"connections", {{"A", {2}}, {"Y", {3}}}}}},
                  {"i1",
                   {{"type", "BUFX2"},
                    {"port_directions", {{"A", "input"}, {"Y", "output"}}},
                    {"connections", {{"A", {2}}, {"Y", {4}}}}}}}},
                {"netnames", json::object()}};
  json top = {{"ports", {{"s", {{"direction", "input"}, {"bits", {2}}}}}},
              {"cells", json::object()},
              {"netnames", {{"s", {{"bits", {2}}}}}}};
  json out_bits = json::array();
  for (int i = 0; i < copies; ++i) {
    top["cells"]["u" + std::to_string(i)] = {
        {"type", "child"},
        {"port_directions", {{"a", "input"}, {"y", "output"}}},
        {"connections", {{"a", {2}}, {"y", {100 + 2 * i, 101 + 2 * i}}}}};
    out_bits.push_back(100 + 2 * i);
    out_bits.push_back(101 + 2 * i);
  }
  top["ports"]["o"] = {{"direction", "output"}, {"bits", out_bits}};
  json inv = {{"attributes", {{"blackbox", "00000000000000000000000000000001"}}},
              {"ports", json::object()},
              {"cells", json::object()}};
  return {{"modules", {{"top", top}, {"child", child}, {"INVX1", inv}}}};
}

TEST(FanoutBuffer, BuildsATreeCountingPinsInsideKeptModules) {
  const auto dir = scratch_dir("");
  std::ofstream(dir + "/in.json") << broadcast_design(40).dump();
  FanoutBufferOptions o;
  o.max_fanout = 16;
  const auto r = buffer_high_fanout(dir + "/in.json", dir + "/out.json", "top", o);
  EXPECT_EQ(r.max_fanout_in, 80);  // 40 instances x 2 cells inside
  EXPECT_EQ(r.nets, 1);
  // 80 pins / 16 per buffer = 5 leaf buffers (8 instances each), the root drives those 5.
  EXPECT_EQ(r.buffers, 5);
  const json out = json::parse(read_text(dir + "/out.json"));
  EXPECT_FALSE(out["modules"].contains("INVX1"));  // blackboxes left to read_liberty -lib
  std::map<int64_t, int> fanout;
  for (const auto& [name, cell] : out["modules"]["top"]["cells"].items()) {
    const auto& conns = cell["connections"];
    const std::string pin = conns.contains("a") ? "a" : "A";
    fanout[conns[pin][0].get<int64_t>()] += conns.contains("a") ? 2 : 1;
  }
  for (const auto& [bit, pins] : fanout) EXPECT_LE(pins, 16) << "bit " << bit;
  EXPECT_EQ(fanout[2], 5);
}

TEST(FanoutBuffer, LowFanoutNetsAreLeftAlone) {
  const auto dir = scratch_dir("");
  std::ofstream(dir + "/in.json") << broadcast_design(4).dump();
  const auto r = buffer_high_fanout(dir + "/in.json", dir + "/out.json", "top", {});
  EXPECT_EQ(r.buffers, 0);
  EXPECT_EQ(r.max_fanout_in, 8);
  EXPECT_THROW(buffer_high_fanout(dir + "/nope.json", dir + "/o.json", "top", {}),
               std::runtime_error);
}

TEST(TimingDrivenSynthesis, BuffersKeepTheNetlistCorrectAndAreCountedInArea) {
  const auto dir = scratch_dir("");
  SynthOptions area;
  const SynthResult a = run_yosys(test::reg_adder(16), area, dir + "/area");
  SynthOptions timed;
  timed.delay_target_ps = 1;
  timed.max_fanout = 4;  // small enough that the adder's register enables get trees
  const SynthResult t = run_yosys(test::reg_adder(16), timed, dir + "/timed");
  EXPECT_GT(t.fanout_buffers, 0);
  EXPECT_GE(t.cells_by_type.at("BUFX4"), t.fanout_buffers);
  EXPECT_GT(t.area_um2, a.area_um2);
  // The buffered netlist still reads (one driver per net, no loops).
  GateSim sim(t.json_netlist, "reg_adder", read_liberty_cells(kDefaultLiberty));
  EXPECT_GT(sim.cells(), t.fanout_buffers);
  EXPECT_NE(read_text(dir + "/timed/synth.ys").find("-constr abc.constr -D 1"), std::string::npos);
}

}  // namespace
}  // namespace ltc::synth
