// The results store of a sweep: one JSON record per line (results.jsonl), each under its key. A
// rerun loads it and skips the keys it holds; what a record contains: synth/sweeps/README.md.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ltc::synth {

// JSON-lines results store, rewritten atomically (temp file + rename) on every put: a killed sweep
// leaves either the old or the new file, never half a record.
class ResultStore {
 public:
  explicit ResultStore(std::string path);  // loads the records already there
  bool has(const std::string& key) const;
  const nlohmann::json* get(const std::string& key) const;
  void put(const nlohmann::json& record);  // record["key"] identifies it
  size_t size() const;
  std::vector<nlohmann::json> records() const;

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> records_;
  std::map<std::string, size_t> index_;
};

}  // namespace ltc::synth
