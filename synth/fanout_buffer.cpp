#include "synth/fanout_buffer.h"

#include "common/file_io.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace ltc::synth {

namespace {

using nlohmann::json;

bool is_blackbox(const json& mod) {
  if (!mod.contains("attributes")) return false;
  const auto& a = mod.at("attributes");
  if (!a.contains("blackbox")) return false;
  const auto& v = a.at("blackbox");
  if (v.is_number()) return v.get<int>() != 0;
  const std::string s = v.get<std::string>();
  return s.find('1') != std::string::npos;
}

struct Sink {
  std::string cell, port;
  size_t index = 0;
  int weight = 1;
};

}  // namespace

FanoutBufferResult buffer_high_fanout(const std::string& json_in, const std::string& json_out,
                                      const std::string& top, const FanoutBufferOptions& opt) {
  if (opt.max_fanout < 2)
    throw std::invalid_argument("buffer_high_fanout: max_fanout must be >= 2");
  std::ifstream in(json_in);
  if (!in) throw std::runtime_error("cannot read netlist " + json_in);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(json_in + ": not a Yosys JSON netlist: " + e.what());
  }
  json& modules = doc.at("modules");
  if (!modules.contains(top)) throw std::runtime_error(json_in + ": no module " + top);

  // Leaf input pins that a module's input port bit reaches (nested modules counted through).
  std::map<std::tuple<std::string, std::string, size_t>, int> reach_cache;
  std::function<int(const std::string&, const std::string&, size_t, int)> reach =
      [&](const std::string& mod_name, const std::string& port, size_t index, int depth) -> int {
    const auto key = std::make_tuple(mod_name, port, index);
    const auto hit = reach_cache.find(key);
    if (hit != reach_cache.end()) return hit->second;
    const json& mod = modules.at(mod_name);
    int count = 1;
    if (depth < 16 && mod.contains("ports") && mod.at("ports").contains(port) &&
        !is_blackbox(mod)) {
      const json& bits = mod.at("ports").at(port).at("bits");
      if (index < bits.size() && bits[index].is_number()) {
        const int64_t bit = bits[index].get<int64_t>();
        count = 0;
        const json mod_cells = mod.value("cells", json::object());
        for (const auto& [cname, cell] : mod_cells.items()) {
          const std::string type = cell.at("type").get<std::string>();
          const json& dirs = cell.value("port_directions", json::object());
          for (const auto& [pin, cbits] : cell.at("connections").items()) {
            if (dirs.value(pin, "input") != "input") continue;
            for (size_t i = 0; i < cbits.size(); ++i) {
              if (!cbits[i].is_number() || cbits[i].get<int64_t>() != bit) continue;
              count += modules.contains(type) && !is_blackbox(modules.at(type))
                           ? reach(type, pin, i, depth + 1)
                           : 1;
            }
          }
        }
        count = std::max(count, 1);
      }
    }
    reach_cache[key] = count;
    return count;
  };

  json& topmod = modules.at(top);
  json& cells = topmod["cells"];
  json& netnames = topmod["netnames"];
  int64_t next_bit = 2;
  auto scan_bits = [&](const json& bits) {
    for (const auto& b : bits) {
      if (b.is_number()) next_bit = std::max(next_bit, b.get<int64_t>() + 1);
    }
  };
  for (const auto& [name, n] : netnames.items()) scan_bits(n.at("bits"));
  for (const auto& [name, c] : cells.items()) {
    for (const auto& [pin, bits] : c.at("connections").items()) scan_bits(bits);
  }
  for (const auto& [name, p] : topmod.at("ports").items()) scan_bits(p.at("bits"));

  std::unordered_map<int64_t, std::vector<Sink>> sinks;
  for (const auto& [cname, cell] : cells.items()) {
    const std::string type = cell.at("type").get<std::string>();
    const json& dirs = cell.value("port_directions", json::object());
    const bool module = modules.contains(type) && !is_blackbox(modules.at(type));
    for (const auto& [pin, bits] : cell.at("connections").items()) {
      if (dirs.value(pin, "input") != "input") continue;
      for (size_t i = 0; i < bits.size(); ++i) {
        if (!bits[i].is_number()) continue;
        sinks[bits[i].get<int64_t>()].push_back(
            {cname, pin, i, module ? reach(type, pin, i, 0) : 1});
      }
    }
  }

  FanoutBufferResult r;
  int serial = 0;
  auto new_buffer = [&](int64_t from_bit) {
    const int64_t out = next_bit++;
    const std::string name = fmt::format("$ltc_fanout_buf${}", serial++);
    cells[name] = {{"hide_name", 1},
                   {"type", opt.buffer_cell},
                   {"parameters", json::object()},
                   {"attributes", json::object()},
                   {"port_directions", {{opt.in_pin, "input"}, {opt.out_pin, "output"}}},
                   {"connections", {{opt.in_pin, {from_bit}}, {opt.out_pin, {out}}}}};
    netnames[fmt::format("$ltc_fanout_net${}", serial)] = {
        {"hide_name", 1}, {"bits", {out}}, {"attributes", json::object()}};
    ++r.buffers;
    return std::make_pair(name, out);
  };
  std::vector<int64_t> bits_order;
  for (const auto& [bit, list] : sinks) bits_order.push_back(bit);
  std::sort(bits_order.begin(), bits_order.end());  // deterministic buffer names
  for (const int64_t bit : bits_order) {
    std::vector<Sink> level = sinks.at(bit);
    int total = 0;
    for (const auto& s : level) total += s.weight;
    r.max_fanout_in = std::max(r.max_fanout_in, total);
    if (total <= opt.max_fanout) continue;
    ++r.nets;
    // Bottom up: groups of at most max_fanout pins under one buffer, until the root's are few.
    std::vector<std::vector<Sink>> groups;
    while (total > opt.max_fanout) {
      groups.clear();
      std::vector<Sink> cur;
      int w = 0;
      for (const auto& s : level) {
        if (!cur.empty() && w + s.weight > opt.max_fanout) {
          groups.push_back(std::move(cur));
          cur.clear();
          w = 0;
        }
        cur.push_back(s);
        w += s.weight;
      }
      if (!cur.empty()) groups.push_back(std::move(cur));
      std::vector<Sink> next;
      for (const auto& g : groups) {
        // The buffer's input stays on `bit` for now; the next level (if any) moves it.
        const auto [name, out] = new_buffer(bit);
        for (const auto& s : g) cells[s.cell]["connections"][s.port][s.index] = out;
        next.push_back({name, opt.in_pin, 0, 1});
      }
      level = std::move(next);
      total = static_cast<int>(level.size());
    }
  }

  // The liberty cells come back from read_liberty -lib.
  for (auto it = modules.begin(); it != modules.end();) {
    if (is_blackbox(it.value())) {
      it = modules.erase(it);
    } else {
      ++it;
    }
  }
  write_text_atomic(json_out, doc.dump());
  return r;
}

}  // namespace ltc::synth
