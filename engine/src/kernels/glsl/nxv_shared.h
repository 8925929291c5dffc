// Declaring a struct once for C++ and GLSL: push constants and parameter blocks. In GLSL a
// struct named X is used as `layout(push_constant, std430) uniform XBlock { X p; } pc;` or
// through a buffer reference (parameter blocks). Only 4- and 8-byte members: std430 lays
// them out as C++ does.
#ifndef NXV_SHARED_H
#define NXV_SHARED_H
#ifdef __cplusplus
#include <cstdint>
#define NXV_STRUCT(name) struct name
#define NXV_ADDR uint64_t
#define NXV_U32 uint32_t
#define NXV_I32 int32_t
#define NXV_U64 uint64_t
#define NXV_I64 int64_t
#else
#define NXV_STRUCT(name) struct name
#define NXV_ADDR uvec2
#define NXV_U32 uint
#define NXV_I32 int
#define NXV_U64 uvec2
#define NXV_I64 uvec2
#endif
#endif
