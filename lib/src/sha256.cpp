#include "irrun/sha256.hpp"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "irrun/file_io.hpp"

namespace irrun {
namespace {

using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

[[noreturn]] void fail() {
  throw std::runtime_error("SHA-256: OpenSSL EVP digest failed");
}

Context start() {
  Context ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) fail();
  return ctx;
}

void update(const Context& ctx, std::span<const std::byte> data) {
  if (EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1) fail();
}

std::string finish(const Context& ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) fail();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace

std::string sha256_hex(std::span<const std::byte> data) {
  const Context ctx = start();
  update(ctx, data);
  return finish(ctx);
}

std::string sha256_hex(std::string_view text) {
  return sha256_hex(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

// Read in chunks, not mapped: a mapping of a just-written output would add the whole file to the
// run's peak RSS (tests/cli/memory_cli_test.cpp).
std::string sha256_file(const std::string& path) {
  const Context ctx = start();
  read_file_chunks(path, [&](std::span<const std::byte> chunk) { update(ctx, chunk); });
  return finish(ctx);
}

}  // namespace irrun
