#include "common/config_dir.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace ltc {

namespace fs = std::filesystem;

std::string config_dir(std::string_view kind) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("LTC_CONFIG_DIR"); env && *env) candidates.emplace_back(env);
#ifdef LTC_SOURCE_DIR
  candidates.emplace_back(fs::path(LTC_SOURCE_DIR) / "configs");
#endif
  candidates.emplace_back("/usr/local/share/ltc/configs");
  candidates.emplace_back("/usr/share/ltc/configs");
  const auto in = [&](const fs::path& c) { return kind.empty() ? c : c / kind; };
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(in(c), ec)) return in(c).string();
  }
  return in(candidates.front()).string();
}

}  // namespace ltc
