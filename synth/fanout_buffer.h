// Fanout buffering across kept module boundaries. ABC (`abc -constr -D`, yosys_flow.h) buffers the
// high-fanout nets it sees, but it maps each kept module alone: a top-level net that feeds 128
// accumulator instances (a tile's plane and framing controls, the table broadcast) looks to it
// like one output with one load. This pass works on the mapped design (Yosys JSON): in the top
// module, a net bit whose sinks reach more than `max_fanout` cell input pins (a module instance's
// pin counts the pins it reaches inside the module) gets a tree of buffer cells with at most
// `max_fanout` pins below each buffer.
#pragma once

#include <string>

namespace ltc::synth {

struct FanoutBufferOptions {
  int max_fanout = 16;
  std::string buffer_cell = "BUFX4";
  std::string in_pin = "A", out_pin = "Y";
};

struct FanoutBufferResult {
  int nets = 0;           // nets that got a tree
  int buffers = 0;        // buffer cells inserted
  int max_fanout_in = 0;  // the largest fanout (in pins) before
};

// Reads `json_in` (Yosys write_json), writes `json_out` without the blackbox modules (the liberty
// cells, which `read_liberty -lib` defines again). Throws std::runtime_error naming the file on a
// netlist it cannot read.
FanoutBufferResult buffer_high_fanout(const std::string& json_in, const std::string& json_out,
                                      const std::string& top, const FanoutBufferOptions& opt);

}  // namespace ltc::synth
