#include "kernels/disk_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "common/errors.hpp"
#include "common/settings.hpp"

namespace nxv {

std::optional<std::filesystem::path> cache_directory() {
  auto s = settings();
  if (s->cache_dir.empty()) return std::nullopt;
  return std::filesystem::path(s->cache_dir);
}

void check_cache_directory() {
  auto dir = cache_directory();
  if (!dir) return;
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  bool writable = !ec && ::access(dir->c_str(), W_OK | X_OK) == 0;
  if (!writable)
    throw Error(ErrorKind::Unsupported,
                "the kernel cache directory " + dir->string() + " cannot be " + (ec ? "created (" + ec.message() + ")" : "written") +
                    ": set NX_VULKAN_CACHE_DIR to a writable directory, or to off to keep compiled kernels in memory only");
}

std::optional<std::vector<char>> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(salt) + "." +
         std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace nxv
