// Seed corpus for fuzz_http: `fuzz_http_corpus OUT_DIR` writes every seed of http_seeds.h.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "http_seeds.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  size_t n = 0;
  for (const auto& seed : baton::server::fuzzing::http_seeds()) {
    std::ofstream out(dir / ("seed-" + seed.name), std::ios::binary);
    out.write(seed.bytes.data(), static_cast<std::streamsize>(seed.bytes.size()));
    ++n;
  }
  std::printf("wrote %zu seeds to %s\n", n, argv[1]);
  return 0;
}
