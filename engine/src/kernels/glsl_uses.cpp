#include "kernels/glsl_uses.hpp"

#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace nxv {

// Generated at build time from kernels/glsl/* (cmake/embed_kernels.cmake).
const std::map<std::string, std::string>& embedded_kernel_sources();

namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool library_name(std::string_view id) { return id.starts_with("nxv_") || id.starts_with("NXV_"); }

// Calls f(name) for every nxv_* / NXV_* identifier in `text` (not inside longer identifiers,
// not the digits of a literal's suffix).
template <class F>
void for_each_library_name(std::string_view text, F&& f) {
  for (size_t i = 0; i < text.size();) {
    if (!ident_start(text[i]) || (i > 0 && ident_char(text[i - 1]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident_char(text[j])) ++j;
    std::string_view id = text.substr(i, j - i);
    if (library_name(id)) f(id);
    i = j;
  }
}

// `src` with comments blanked (newlines kept).
std::string strip_comments(std::string_view src) {
  std::string out(src);
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '/' && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      for (; i < out.size() && !(out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

struct Library {
  // Every library name mentioned by some definition of a name (all files, all overloads, every
  // branch of any #if: a superset is harmless).
  std::unordered_map<std::string, std::set<std::string, std::less<>>> deps;
  // Names some file guards with NXV_USE_<name>.
  std::set<std::string, std::less<>> guarded;
};

void scan_directive(std::string_view line, Library& lib) {
  for_each_library_name(line, [&](std::string_view id) {
    if (id.starts_with("NXV_USE_")) lib.guarded.emplace(id.substr(8));
  });
  size_t p = line.find_first_not_of(" \t", 1);
  if (p == std::string_view::npos || line.substr(p, 6) != "define") return;
  p = line.find_first_not_of(" \t", p + 6);
  if (p == std::string_view::npos) return;
  size_t e = p;
  while (e < line.size() && ident_char(line[e])) ++e;
  std::string name(line.substr(p, e - p));
  if (!library_name(name) || name.starts_with("NXV_USE_")) return;
  if (e < line.size() && line[e] == '(') e = line.find(')', e);  // a function-like macro's parameters
  auto& d = lib.deps[name];
  if (e != std::string_view::npos)
    for_each_library_name(line.substr(e), [&](std::string_view id) { if (id != name) d.emplace(id); });
}

// Code outside directives: at brace depth 0, a declaration (up to ';') or a definition's
// header (up to '{') defines the first library name in it; everything it mentions, in the
// header or the body, is its dependency.
void scan_code(std::string_view code, Library& lib) {
  int depth = 0;
  std::string_view::size_type start = 0;  // of the current declaration or definition
  std::string defined;
  auto record = [&](std::string_view text) {
    if (defined.empty()) return;
    auto& d = lib.deps[defined];
    for_each_library_name(text, [&](std::string_view id) { if (id != defined) d.emplace(id); });
  };
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '{') {
      if (depth++ == 0) {
        defined.clear();
        for_each_library_name(code.substr(start, i - start), [&](std::string_view id) {
          if (defined.empty()) defined = id;
        });
        record(code.substr(start, i - start));
        start = i + 1;
      }
    } else if (c == '}') {
      if (--depth == 0) {
        record(code.substr(start, i - start));
        start = i + 1;
      }
    } else if (c == ';' && depth == 0) {
      std::string_view decl = code.substr(start, i - start);
      defined.clear();
      for_each_library_name(decl, [&](std::string_view id) {
        if (defined.empty()) defined = id;
      });
      record(decl);
      defined.clear();
      start = i + 1;
    }
  }
}

Library scan_library() {
  Library lib;
  for (const auto& [file, source] : embedded_kernel_sources()) {
    if (!file.ends_with(".glsl")) continue;
    std::string text = strip_comments(source);
    std::string code;  // text with its directive lines blanked
    code.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      size_t e = text.find('\n', i);
      while (e != std::string::npos && e > i && text[e - 1] == '\\') e = text.find('\n', e + 1);  // continuations
      if (e == std::string::npos) e = text.size();
      std::string_view line(text.data() + i, e - i);
      size_t first = line.find_first_not_of(" \t");
      if (first != std::string_view::npos && line[first] == '#') {
        scan_directive(line.substr(first), lib);
        code.push_back('\n');
      } else {
        code.append(line);
        code.push_back('\n');
      }
      i = e + 1;
    }
    scan_code(code, lib);
  }
  return lib;
}

}  // namespace

GlslDefines glsl_use_defines(const GlslDefines& defines) {
  static const Library lib = scan_library();
  std::set<std::string, std::less<>> used;
  std::vector<std::string> todo;
  auto use = [&](std::string_view id) {
    if (used.emplace(id).second) todo.emplace_back(id);
  };
  for (const auto& [name, value] : defines) for_each_library_name(value, use);
  while (!todo.empty()) {
    std::string n = std::move(todo.back());
    todo.pop_back();
    if (auto it = lib.deps.find(n); it != lib.deps.end())
      for (const auto& d : it->second) use(d);
  }
  GlslDefines out{{"NXV_SELECT", "1"}};
  for (const auto& n : used)
    if (lib.guarded.contains(n)) out.emplace_back("NXV_USE_" + n, "1");
  return out;
}

void append_glsl_use_defines(GlslDefines& defines) {
  GlslDefines uses = glsl_use_defines(defines);
  defines.insert(defines.end(), uses.begin(), uses.end());
}

void reselect_glsl_uses(GlslDefines& defines, const std::string& generated) {
  std::erase_if(defines, [](const auto& p) { return p.first == "NXV_SELECT" || p.first.rfind("NXV_USE_", 0) == 0; });
  GlslDefines scanned = defines;
  scanned.emplace_back("", generated);
  GlslDefines uses = glsl_use_defines(scanned);
  defines.insert(defines.end(), uses.begin(), uses.end());
}

void set_define(GlslDefines& defines, const std::string& name, const std::string& value) {
  for (auto& [n, v] : defines)
    if (n == name) {
      v = value;
      return;
    }
  defines.emplace_back(name, value);
}

}  // namespace nxv
