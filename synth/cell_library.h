// The standard-cell libraries the PPA flow maps to (`--lib`): each one's liberty, the cells the
// flow names (ABC's driving cell, the buffers of insbuf and the fanout pass), its load units and
// its node and supply for node scaling.
//   osu018     OSU 0.18 um (qflow-tech-osu018 package), 1.8 V; wire load from its LEF.
//   nangate45  NanGate 45 nm Open Cell Library (FreePDK45), typical corner 1.1 V 25 C, shipped in
//              synth/lib/nangate45/ (ORIGIN.md); wire load from the liberty's default wire_load.
#pragma once

#include <string>
#include <vector>

namespace ltc::synth {

struct CellLibrary {
  std::string name;         // the --lib value
  std::string description;  // printed with results
  std::string liberty;      // path; may be gzip-compressed (.gz)
  std::string cell_models;  // Verilog cell models for iverilog; empty: none shipped
  std::string lef;          // for the wire-load estimate when the liberty has no wire_load
  std::string wire_layer;
  // ABC's timing constraints (abc -constr): the cell driving every input and the load on every
  // output, in the liberty's capacitance unit.
  std::string driving_cell;
  double abc_load = 0;
  // The buffer insbuf puts on net-to-net assigns and the fanout pass's buffer, with pin names.
  std::string assign_buffer, fanout_buffer, buffer_in, buffer_out;
  double node_nm = 0, vdd = 0;  // for node scaling (ppa.h NodeScaling)
};

// Throws InputError naming --lib and the valid names.
const CellLibrary& cell_library(const std::string& name);
std::vector<std::string> cell_library_names();

// A plain-text copy of a liberty file that tools without gzip support (Yosys's ABC, OpenSTA)
// read: `path` itself unless it ends in .gz, else a copy decompressed once per machine into
// <temp>/ltc-liberty-<content hash>/ (written to a temporary name and renamed, so concurrent
// runs never see a partial file). Throws std::runtime_error naming the file on a read error.
std::string plain_liberty(const std::string& path);

// The text of a liberty file, decompressed when it ends in .gz.
std::string read_liberty_text(const std::string& path);

}  // namespace ltc::synth
