// SHA-256 digests (OpenSSL libcrypto's EVP API) as lowercase hex, for golden manifests.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace irrun {

// Digest of `data`: 64 lowercase hex digits.
std::string sha256_hex(std::span<const std::byte> data);
std::string sha256_hex(std::string_view text);

// Digest of a whole file (read in chunks). Throws irrun::input_error as read_file_chunks does.
std::string sha256_file(const std::string& path);

}  // namespace irrun
