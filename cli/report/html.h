// A minimal HTML writer for the DSE report: escaped text, tables, figures, reproduce commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ltc::report {

std::string escape(std::string_view text);

// A table with a header row; cells are escaped unless `raw_cells` (for links and markup).
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, bool raw_cells = false);

// "How to reproduce" line under a figure or table.
std::string reproduce(std::string_view command);

// Paragraph of escaped text.
std::string para(std::string_view text);

// A full page around the sections' HTML, with a table of contents.
struct Section {
  std::string id, title, html;
};
std::string page(std::string_view title, std::string_view intro,
                 const std::vector<Section>& sections);

}  // namespace ltc::report
