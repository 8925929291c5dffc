# Writes OUTPUT: a C++ file that maps each GLSL template's name to its source text, returned by
# nxv::FUNCTION() (default embedded_kernel_sources).
# Usage: cmake -DOUTPUT=... -DSOURCES="a.comp|b.glsl" [-DFUNCTION=name] -P embed_kernels.cmake
if(NOT FUNCTION)
  set(FUNCTION embedded_kernel_sources)
endif()
set(body "#include <map>\n#include <string>\nnamespace nxv {\nconst std::map<std::string, std::string>& ${FUNCTION}() {\n  static const std::map<std::string, std::string> sources = {\n")
string(REPLACE "|" ";" SOURCES "${SOURCES}")
foreach(src IN LISTS SOURCES)
  get_filename_component(name "${src}" NAME)
  # Templates are named without extension; libraries (.glsl) keep it, as #include names them.
  string(REGEX REPLACE "\\.comp$" "" name "${name}")
  file(READ "${src}" text)
  string(APPEND body "    {\"${name}\", R\"nxvglsl(${text})nxvglsl\"},\n")
endforeach()
string(APPEND body "  };\n  return sources;\n}\n}  // namespace nxv\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
