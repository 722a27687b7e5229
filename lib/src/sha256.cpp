#include "irrun/sha256.hpp"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "irrun/file_io.hpp"

namespace irrun {

std::string sha256_hex(std::span<const std::byte> data) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1)
    throw std::runtime_error("SHA-256: OpenSSL EVP digest failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view text) {
  return sha256_hex(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

std::string sha256_file(const std::string& path) {
  const Buffer b = read_file(path);
  return sha256_hex(std::span<const std::byte>(b.data(), b.size()));
}

}  // namespace irrun
