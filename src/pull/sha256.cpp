#include "pull/sha256.h"

#include <openssl/evp.h>

#include "pull/pull.h"

namespace baton::pull {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (ctx_->md == nullptr) throw PullError("SHA-256: out of memory creating the OpenSSL context");
  reset();
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_->md);
}

void Sha256::reset() {
  if (EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) {
    throw PullError("SHA-256: OpenSSL refused to initialise the digest");
  }
}

void Sha256::update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(ctx_->md, data, n) != 1) {
    throw PullError("SHA-256: OpenSSL digest update failed");
  }
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md, md, &len) != 1) {
    throw PullError("SHA-256: OpenSSL digest final failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

}  // namespace baton::pull
