#include "synth/result_store.h"

#include "common/file_io.h"

#include <fstream>

namespace ltc::synth {

using nlohmann::json;

ResultStore::ResultStore(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      json r = json::parse(line);
      if (!r.contains("key")) continue;
      const std::string key = r["key"];
      if (index_.count(key)) {
        records_[index_[key]] = std::move(r);
      } else {
        index_[key] = records_.size();
        records_.push_back(std::move(r));
      }
    } catch (const json::exception&) {
      // Never written by us (writes are atomic); skip rather than lose the rest.
    }
  }
}

bool ResultStore::has(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return index_.count(key) != 0;
}

const json* ResultStore::get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &records_[it->second];
}

void ResultStore::put(const json& record) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = record.at("key");
  if (index_.count(key)) {
    records_[index_[key]] = record;
  } else {
    index_[key] = records_.size();
    records_.push_back(record);
  }
  std::string text;
  for (const auto& r : records_) text += r.dump() + "\n";
  write_text_atomic(path_, text);
}

size_t ResultStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.size();
}

std::vector<json> ResultStore::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

}  // namespace ltc::synth
