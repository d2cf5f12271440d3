#include "cli/report/html.h"

namespace ltc::report {

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
  std::string s = "<table>\n<tr>";
  for (const auto& h : header) s += "<th>" + escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const auto& cell : row) s += "<td>" + (raw_cells ? cell : escape(cell)) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string reproduce(std::string_view command) {
  return "<p class=\"cmd\">reproduce: <code>" + escape(command) + "</code></p>\n";
}

std::string para(std::string_view text) {
  return "<p>" + escape(text) + "</p>\n";
}

std::string page(std::string_view title, std::string_view intro,
                 const std::vector<Section>& sections) {
  std::string s =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + escape(title) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222;line-height:1.4}\n"
      "table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}\n"
      "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}\n"
      "th{background:#eee}td:first-child,th:first-child{text-align:left}\n"
      "p.cmd{font-size:0.85em;color:#555}code{background:#f4f4f4;padding:1px 4px}\n"
      ".warn{color:#a40}.ok{color:#070}figure{margin:1em 0}\n"
      "</style></head><body>\n<h1>" +
      escape(title) + "</h1>\n" + std::string(intro) + "<h2>Contents</h2>\n<ul>\n";
  for (const auto& sec : sections) {
    s += "<li><a href=\"#" + sec.id + "\">" + escape(sec.title) + "</a></li>\n";
  }
  s += "</ul>\n";
  for (const auto& sec : sections) {
    s += "<h2 id=\"" + sec.id + "\">" + escape(sec.title) + "</h2>\n" + sec.html;
  }
  return s + "</body></html>\n";
}

}  // namespace ltc::report
