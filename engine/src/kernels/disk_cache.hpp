// Files in the user's cache directory, written atomically (temp file + rename) so that two
// processes sharing the directory never see a half-written entry.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nxv {

// NX_VULKAN_CACHE_DIR (a path, or "off"), else $XDG_CACHE_HOME/nx_vulkan, else
// ~/.cache/nx_vulkan; nullopt when disabled or no home is known.
std::optional<std::filesystem::path> cache_directory();

// Throws Error(Unsupported) naming NX_VULKAN_CACHE_DIR where the cache directory is set but
// cannot be created or written (devices check it when they open).
void check_cache_directory();

std::optional<std::vector<char>> read_file(const std::filesystem::path& path);
// Best effort: a cache that cannot be written is only slower, never an error.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// 64-bit FNV-1a, used to name cache entries; entries also store their full key, so that a
// collision is detected rather than trusted.
uint64_t fnv1a64(std::string_view bytes);
std::string hex64(uint64_t v);

}  // namespace nxv
