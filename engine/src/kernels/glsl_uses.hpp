// Which parts of the GLSL library (kernels/glsl/*.glsl) a kernel needs, so that it parses and
// compiles only those. Library functions, constants and macros named nxv_* / NXV_* may be
// guarded with `#if !NXV_SELECT || defined(NXV_USE_<name>)`; given a kernel's defines, this
// finds the library names their values mention (an OP expression, LOAD_*/STORE_OUT), closes
// over what those definitions mention in turn (read from the embedded library sources
// themselves: nothing to keep in sync by hand), and returns NXV_SELECT=1 with NXV_USE_<name>=1
// for every guarded name reached. A name enables every definition of it (all overloads, in
// every file). Without NXV_SELECT a template that includes the library gets all of it.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace nxv {

using GlslDefines = std::vector<std::pair<std::string, std::string>>;

// NXV_SELECT=1 and the sorted NXV_USE_<name>=1 switches for `defines` (a kernel key's).
GlslDefines glsl_use_defines(const GlslDefines& defines);

// Appends glsl_use_defines(defines) to `defines`.
void append_glsl_use_defines(GlslDefines& defines);

// The switches again where a key gained generated code (fused chains): the old ones dropped,
// then those of `defines` and `generated` together appended.
void reselect_glsl_uses(GlslDefines& defines, const std::string& generated);

// Sets `name` to `value`, replacing its earlier value where it has one.
void set_define(GlslDefines& defines, const std::string& name, const std::string& value);

}  // namespace nxv
