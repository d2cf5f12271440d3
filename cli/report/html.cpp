#include "cli/report/html.h"

#include <cctype>
#include <cstdlib>

namespace ltc::report {
namespace {

// "12.5", "-3.1%", "2.80x", "1.2e-05", "38/40": right-aligned in a table.
bool looks_numeric(std::string_view s) {
  if (s.empty()) return false;
  size_t digits = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else if (!(c == '.' || c == '-' || c == '+' || c == 'e' || c == '%' || c == 'x' || c == '/' ||
                 c == ',' || c == ' ')) {
      return false;
    }
  }
  return digits > 0;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, bool raw_cells) {
  std::string s = "<table>\n<thead><tr>";
  for (const auto& h : header) s += "<th>" + escape(h) + "</th>";
  s += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const auto& cell : row) {
      s += looks_numeric(cell) ? "<td class=\"num\">" : "<td>";
      s += (raw_cells ? cell : escape(cell)) + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

std::string details(std::string_view summary, std::string_view html) {
  return "<details><summary>" + escape(summary) + "</summary>\n" + std::string(html) +
         "</details>\n";
}

std::string reproduce(std::string_view command) {
  return "<p class=\"cmd\">reproduce: <code>" + escape(command) + "</code></p>\n";
}

std::string para(std::string_view text) {
  return "<p>" + escape(text) + "</p>\n";
}

std::string link(std::string_view href, std::string_view text) {
  return "<a href=\"" + escape(href) + "\">" + escape(text) + "</a>";
}

std::string page(std::string_view title, std::string_view head_html,
                 const std::vector<Section>& sections, std::string_view scripts) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      escape(title) +
      "</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;max-width:1150px;margin:1.5em auto;padding:0 1em;"
      "color:#222;line-height:1.45}\n"
      "h1{margin:0 0 .2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}\n"
      "table{border-collapse:collapse;margin:.6em 0;font-size:.88em}\n"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\n"
      "th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums;"
      "white-space:nowrap}\n"
      "p.cmd{font-size:.82em;color:#555;margin:.2em 0}code{background:#f4f4f4;padding:1px 4px}\n"
      ".warn{color:#a40}.ok{color:#070}.differs{color:#a40}.info{color:#555}\n"
      "details{margin:.5em 0}summary{cursor:pointer;color:#245}\n"
      ".plot{margin:.8em 0;min-height:40px}.plotdata{font-size:.82em;color:#555;margin:0}\n"
      "p.run{font-size:.9em;color:#444}nav ul{columns:2}\n"
      ".summary table{font-size:.8em}.summary td{padding:2px 6px}"
      ".summary td:nth-child(5){white-space:nowrap}\n"
      "</style></head><body>\n<h1>" +
      escape(title) + "</h1>\n" + std::string(head_html) +
      "<nav><h2 id=\"contents\">Contents</h2>\n<ul>\n";
  for (const auto& sec : sections) {
    s += "<li><a href=\"#" + sec.id + "\">" + escape(sec.title) + "</a></li>\n";
  }
  s += "</ul></nav>\n";
  for (const auto& sec : sections) {
    s += "<section><h2 id=\"" + sec.id + "\">" + escape(sec.title) + "</h2>\n" + sec.html +
         "</section>\n";
  }
  return s + std::string(scripts) + "</body></html>\n";
}

}  // namespace ltc::report
