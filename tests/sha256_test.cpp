#include "irrun/sha256.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "irrun/error.hpp"

using irrun::sha256_hex;

TEST_CASE("sha256 matches the FIPS 180-2 test vectors") {
  CHECK(sha256_hex(std::string_view("")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex(std::string_view("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256_file hashes a file's bytes, including an empty file") {
  irrun::testing::ScratchDir dir("sha256");
  CHECK(irrun::sha256_file(dir.write("abc.txt", "abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(irrun::sha256_file(dir.write("empty", "")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Read in 1 MiB chunks: the digest of a file of several chunks is the digest of its bytes.
  CHECK(irrun::sha256_file(dir.write("a3M", std::string(3000000, 'a'))) ==
        sha256_hex(std::string(3000000, 'a')));
  try {
    irrun::sha256_file(dir.file("missing"));
    FAIL("no exception");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == irrun::ExitCode::bad_input);
  }
}
