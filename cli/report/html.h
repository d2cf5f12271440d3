// A minimal HTML writer for the DSE report: escaped text, tables (numbers right-aligned, long ones
// folded), reproduce commands, and the page around the sections.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ltc::report {

std::string escape(std::string_view text);

// A table with a header row (units belong in the header: "latency (ms)"); cells are escaped
// unless `raw_cells` (for links and markup). Cells that read as numbers are right-aligned.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, bool raw_cells = false);

// `html` folded under a one-line summary (long tables under their plot).
std::string details(std::string_view summary, std::string_view html);

// "How to reproduce" line under a figure or table.
std::string reproduce(std::string_view command);

// Paragraph of escaped text.
std::string para(std::string_view text);

// A link to a file written beside the page (or an anchor on it).
std::string link(std::string_view href, std::string_view text);

struct Section {
  std::string id, title, html;
};

// The whole page: `head_html` (the summary screen) first, then a table of contents and the
// sections; `scripts` (the plotting library and the code that draws every plot) inlined at the
// end, so the file needs nothing else.
std::string page(std::string_view title, std::string_view head_html,
                 const std::vector<Section>& sections, std::string_view scripts);

}  // namespace ltc::report
