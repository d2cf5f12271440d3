#include "synth/liberty.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace ltc::synth {

// ---- Boolean expressions ----------------------------------------------------------------------

class BoolExprParser {
 public:
  BoolExprParser(const std::string& text, const std::vector<std::string>& vars, BoolExpr& out)
      : s_(text), vars_(vars), out_(out) {}

  void run() {
    out_.root_ = parse_or();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(
        fmt::format("liberty function \"{}\": {} at position {}", s_, what, pos_ + 1));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']' ||
           c == '.';
  }
  int add(BoolExpr::Node n) {
    out_.nodes_.push_back(n);
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int parse_or() {
    int a = parse_and();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == '|' || s_[pos_] == '+')) {
        ++pos_;
        a = add({'|', a, parse_and()});
      } else {
        return a;
      }
    }
  }
  // AND binds by `&`, `*` or juxtaposition (a term starting right after another).
  int parse_and() {
    int a = parse_xor();
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return a;
      const char c = s_[pos_];
      if (c == '&' || c == '*') {
        ++pos_;
        a = add({'&', a, parse_xor()});
      } else if (c == '(' || c == '!' || ident_char(c)) {
        a = add({'&', a, parse_xor()});
      } else {
        return a;
      }
    }
  }
  int parse_xor() {
    int a = parse_unary();
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '^') {
        ++pos_;
        a = add({'^', a, parse_unary()});
      } else {
        return a;
      }
    }
  }
  int parse_unary() {
    skip_space();
    if (pos_ >= s_.size()) fail("expression ends early");
    int a;
    if (s_[pos_] == '!') {
      ++pos_;
      a = add({'!', parse_unary()});
    } else if (s_[pos_] == '(') {
      ++pos_;
      a = parse_or();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ')') fail("missing ')'");
      ++pos_;
    } else if (ident_char(s_[pos_])) {
      const size_t start = pos_;
      while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
      const std::string id = s_.substr(start, pos_ - start);
      BoolExpr::Node n{'v'};
      if (id == "0" || id == "1") {
        n.op = 'c';
        n.value = id == "1";
      } else {
        const auto it = std::find(vars_.begin(), vars_.end(), id);
        if (it == vars_.end()) {
          pos_ = start;
          fail("unknown pin or variable '" + id + "'");
        }
        n.var = static_cast<int>(it - vars_.begin());
      }
      a = add(n);
    } else {
      fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    }
    // Postfix complement: a'
    for (;;) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '\'') {
        ++pos_;
        a = add({'!', a});
      } else {
        return a;
      }
    }
  }

  const std::string& s_;
  const std::vector<std::string>& vars_;
  BoolExpr& out_;
  size_t pos_ = 0;
};

BoolExpr BoolExpr::parse(const std::string& expr, const std::vector<std::string>& vars) {
  if (vars.size() > 16) throw std::runtime_error("liberty function with more than 16 variables");
  BoolExpr e;
  BoolExprParser(expr, vars, e).run();
  return e;
}

bool BoolExpr::eval_node(int i, uint32_t x) const {
  const Node& n = nodes_[i];
  switch (n.op) {
    case 'v':
      return (x >> n.var) & 1u;
    case 'c':
      return n.value;
    case '!':
      return !eval_node(n.a, x);
    case '&':
      return eval_node(n.a, x) && eval_node(n.b, x);
    case '|':
      return eval_node(n.a, x) || eval_node(n.b, x);
    default:
      return eval_node(n.a, x) != eval_node(n.b, x);
  }
}

bool BoolExpr::eval(uint32_t assignment) const {
  if (root_ < 0) throw std::logic_error("BoolExpr::eval on an empty expression");
  return eval_node(root_, assignment);
}

std::vector<uint8_t> BoolExpr::truth_table(int nvars) const {
  std::vector<uint8_t> t(size_t{1} << nvars);
  for (uint32_t i = 0; i < t.size(); ++i) t[i] = eval(i) ? 1 : 0;
  return t;
}

// ---- liberty files ----------------------------------------------------------------------------

namespace {

struct Group {
  std::string type;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> attrs;  // simple attributes, in order
  std::vector<std::unique_ptr<Group>> children;
  int line = 0;
  std::string attr(const std::string& name) const {
    for (const auto& [k, v] : attrs) {
      if (k == name) return v;
    }
    return {};
  }
};

class LibertyReader {
 public:
  LibertyReader(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  std::unique_ptr<Group> read() {
    auto root = std::make_unique<Group>();
    root->type = "<file>";
    while (peek().kind != Tok::kEnd) parse_statement(*root);
    return root;
  }

 private:
  struct Tok {
    enum Kind { kWord, kString, kPunct, kEnd } kind;
    std::string text;
    int line;
  };

  [[noreturn]] void fail(const std::string& what, int line) const {
    throw std::runtime_error(fmt::format("{}:{}: liberty syntax error: {}", source_, line, what));
  }

  Tok lex() {
    for (;;) {
      while (pos_ < s_.size() && (std::isspace(static_cast<unsigned char>(s_[pos_])) ||
                                  (s_[pos_] == '\\' && pos_ + 1 < s_.size() &&
                                   (s_[pos_ + 1] == '\n' || s_[pos_ + 1] == '\r')))) {
        if (s_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (s_.compare(pos_, 2, "/*") == 0) {
        const size_t end = s_.find("*/", pos_ + 2);
        if (end == std::string::npos) fail("unterminated comment", line_);
        line_ += static_cast<int>(std::count(s_.begin() + pos_, s_.begin() + end, '\n'));
        pos_ = end + 2;
        continue;
      }
      if (s_.compare(pos_, 2, "//") == 0) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      break;
    }
    if (pos_ >= s_.size()) return {Tok::kEnd, "", line_};
    const char c = s_[pos_];
    if (c == '"') {
      std::string v;
      const int start_line = line_;
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '\n')) {
          pos_ += 2;
          ++line_;
          continue;
        }
        if (s_[pos_] == '\n') ++line_;
        v += s_[pos_++];
      }
      if (pos_ >= s_.size()) fail("unterminated string", start_line);
      ++pos_;
      return {Tok::kString, v, start_line};
    }
    if (std::string("(){}:;,").find(c) != std::string::npos) {
      ++pos_;
      return {Tok::kPunct, std::string(1, c), line_};
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) &&
           std::string("(){}:;,\"").find(s_[pos_]) == std::string::npos) {
      ++pos_;
    }
    return {Tok::kWord, s_.substr(start, pos_ - start), line_};
  }

  const Tok& peek() {
    if (!has_peek_) {
      peeked_ = lex();
      has_peek_ = true;
    }
    return peeked_;
  }
  Tok next() {
    peek();
    has_peek_ = false;
    return peeked_;
  }
  void expect(const std::string& punct) {
    const Tok t = next();
    if (t.kind != Tok::kPunct || t.text != punct) {
      fail("expected '" + punct + "', found '" + t.text + "'", t.line);
    }
  }

  // name : value ;   |   name ( args ) ;   |   name ( args ) { statements }
  void parse_statement(Group& parent) {
    const Tok name = next();
    if (name.kind != Tok::kWord) fail("expected a name, found '" + name.text + "'", name.line);
    const Tok t = next();
    if (t.kind == Tok::kPunct && t.text == ":") {
      std::string value;
      for (;;) {
        const Tok v = next();
        if (v.kind == Tok::kEnd) fail("attribute " + name.text + " has no ';'", name.line);
        if (v.kind == Tok::kPunct && v.text == ";") break;
        // Some libraries end an attribute at the line break without ';'.
        value += (value.empty() ? "" : " ") + v.text;
        if (peek().kind != Tok::kPunct && peek().line != v.line) break;
        if (peek().kind == Tok::kPunct && peek().text == "}") break;
      }
      parent.attrs.emplace_back(name.text, value);
      return;
    }
    if (t.kind != Tok::kPunct || t.text != "(") {
      fail("expected ':' or '(' after " + name.text + ", found '" + t.text + "'", t.line);
    }
    auto g = std::make_unique<Group>();
    g->type = name.text;
    g->line = name.line;
    std::string arg;
    for (;;) {
      const Tok a = next();
      if (a.kind == Tok::kEnd) fail("unterminated '(' of " + name.text, name.line);
      if (a.kind == Tok::kPunct && a.text == ")") break;
      if (a.kind == Tok::kPunct && a.text == ",") {
        g->args.push_back(arg);
        arg.clear();
        continue;
      }
      arg += (arg.empty() ? "" : " ") + a.text;
    }
    if (!arg.empty() || !g->args.empty()) g->args.push_back(arg);
    if (peek().kind == Tok::kPunct && peek().text == "{") {
      next();
      while (!(peek().kind == Tok::kPunct && peek().text == "}")) {
        if (peek().kind == Tok::kEnd) fail("group " + name.text + " is not closed", name.line);
        parse_statement(*g);
      }
      next();
      parent.children.push_back(std::move(g));
    } else if (peek().kind == Tok::kPunct && peek().text == ";") {
      next();  // complex attribute: ignored
    }
  }

  const std::string& s_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  Tok peeked_{Tok::kEnd, "", 0};
  bool has_peek_ = false;
};

void collect_cells(const Group& g, std::map<std::string, LibertyCell>& cells) {
  for (const auto& child : g.children) {
    if (child->type != "cell") {
      collect_cells(*child, cells);
      continue;
    }
    LibertyCell cell;
    cell.name = child->args.empty() ? "" : child->args[0];
    const std::string area = child->attr("area");
    if (!area.empty()) cell.area = std::stod(area);
    for (const auto& sub : child->children) {
      if (sub->type == "pin") {
        const std::string dir = sub->attr("direction");
        for (const auto& name : sub->args) {
          LibertyPin p;
          p.name = name;
          p.input = dir != "output" && dir != "inout";
          p.function = sub->attr("function");
          p.three_state = sub->attr("three_state");
          cell.pins.push_back(p);
        }
      } else if (sub->type == "ff" || sub->type == "ff_bank") {
        cell.has_ff = true;
        if (sub->args.size() >= 1) cell.ff.var = sub->args[0];
        if (sub->args.size() >= 2) cell.ff.var_n = sub->args[1];
        cell.ff.next_state = sub->attr("next_state");
        cell.ff.clocked_on = sub->attr("clocked_on");
        cell.ff.clear = sub->attr("clear");
        cell.ff.preset = sub->attr("preset");
        const std::string v1 = sub->attr("clear_preset_var1");
        const std::string v2 = sub->attr("clear_preset_var2");
        if (!v1.empty()) cell.ff.clear_preset_var1 = v1[0];
        if (!v2.empty()) cell.ff.clear_preset_var2 = v2[0];
      } else if (sub->type == "latch" || sub->type == "latch_bank" || sub->type == "statetable") {
        cell.has_latch = true;
      }
    }
    cells[cell.name] = std::move(cell);
  }
}

}  // namespace

std::map<std::string, LibertyCell> parse_liberty_cells(const std::string& text,
                                                       const std::string& source_name) {
  const auto root = LibertyReader(text, source_name).read();
  std::map<std::string, LibertyCell> cells;
  collect_cells(*root, cells);
  if (cells.empty()) throw std::runtime_error(source_name + ": liberty file defines no cells");
  return cells;
}

std::map<std::string, LibertyCell> read_liberty_cells(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read liberty file " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_liberty_cells(s.str(), path);
}

}  // namespace ltc::synth
