#pragma once
// Incremental SHA-256 over OpenSSL's EVP interface.
#include <cstddef>
#include <memory>
#include <string>

namespace baton::pull {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void reset();
  void update(const void* data, size_t n);
  std::string hex_digest();  // lowercase, 64 characters; the hasher must be reset to reuse

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace baton::pull
