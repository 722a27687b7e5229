#include "irrun/tensor.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <clocale>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "irrun/error.hpp"
#include "support/comma_locale.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

using TempDir = irrun::testing::ScratchDir;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

using irrun::Buffer;
using irrun::ElementType;
using irrun::Tensor;

TEST_CASE("Buffer::allocate is zeroed and 64-byte aligned", "[tensor]") {
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}}) {
    Buffer b = Buffer::allocate(n);
    CHECK(b.size() == n);
    CHECK(b.writable());
    REQUIRE(b.data() != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % 64 == 0);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(b.data()[i] == std::byte{0});
  }
}

TEST_CASE("Buffer::allocate maps buffers of 2 MiB and more near a 2 MiB boundary", "[tensor]") {
  // Anonymous pages, marked for huge pages: zeroed, writable to their last byte, 64-byte aligned
  // less than a page past a 2 MiB boundary (each buffer's colour), counted in memory_in_use by
  // whole pages and given back on release.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::set<std::uintptr_t> colours;
  for (std::size_t n : {kHuge, kHuge + 1, 3 * kHuge + 4097, kHuge, kHuge, kHuge, kHuge, kHuge}) {
    const std::uint64_t before = irrun::memory_in_use();
    {
      Buffer b = Buffer::allocate(n);
      CHECK(b.size() == n);
      REQUIRE(b.writable());
      const auto at = reinterpret_cast<std::uintptr_t>(b.data());
      CHECK(at % 64 == 0);
      CHECK(at % kHuge < page);
      colours.insert(at % kHuge);
      const std::uint64_t pages = (n + page - 1) / page * page;
      CHECK(irrun::memory_in_use() - before >= pages);
      CHECK(irrun::memory_in_use() - before <= pages + page);
      std::size_t nonzero = 0;
      for (std::size_t i = 0; i < n; ++i) nonzero += b.data()[i] != std::byte{0};
      CHECK(nonzero == 0);
      b.mutable_data()[0] = b.mutable_data()[n - 1] = std::byte{7};
      CHECK(b.data()[n - 1] == std::byte{7});
    }
    CHECK(irrun::memory_in_use() == before);
  }
  CHECK(colours.size() == 8);  // eight buffers in a row, eight colours
  // Just below: the heap, 64-byte aligned, as every smaller buffer.
  Buffer small = Buffer::allocate(kHuge - 1);
  CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % 64 == 0);
  // Sizes no mapping can hold (with its 2 MiB of slack) are limit errors, never wrapped mappings.
  const std::uint64_t before = irrun::memory_in_use();
  for (std::size_t n : {SIZE_MAX / 2, SIZE_MAX - kHuge - page, SIZE_MAX - page / 2}) {
    try {
      (void)Buffer::allocate(n);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::limit);
    }
  }
  CHECK(irrun::memory_in_use() == before);
}

TEST_CASE("Buffer::slice shares the owner and checks bounds", "[tensor]") {
  Buffer s;
  {
    Buffer b = Buffer::allocate(16);
    for (int i = 0; i < 16; ++i) b.mutable_data()[i] = std::byte(i);
    s = b.slice(4, 8);
  }  // the slice keeps the memory alive
  REQUIRE(s.size() == 8);
  CHECK(s.data()[0] == std::byte{4});
  CHECK(s.data()[7] == std::byte{11});
  CHECK(s.slice(8, 0).size() == 0);
  for (const auto& [offset, size] : {std::pair<std::size_t, std::size_t>{5, 4}, {SIZE_MAX, 2}}) {
    try {
      (void)s.slice(offset, size);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::bad_input);
      CHECK_THAT(e.what(), Catch::Contains("outside a buffer of 8 bytes"));
    }
  }
}

TEST_CASE("Buffer::map_file maps an unaligned byte range read-only", "[tensor]") {
  TempDir dir("tensor");
  const auto path = dir.file("data.bin");
  std::string content(10000, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  write_bytes(path, content);

  // An offset past the first page and not page-aligned.
  Buffer b = Buffer::map_file(path, 4099, 5000);
  REQUIRE(b.size() == 5000);
  CHECK_FALSE(b.writable());
  CHECK(b.mutable_data() == nullptr);
  for (std::size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b.data()[i] == static_cast<std::byte>(content[4099 + i]));
  }
  CHECK(Buffer::map_file(path, 0, 10000).size() == 10000);
  CHECK(Buffer::map_file(path, 10000, 0).size() == 0);

  SECTION("a range past the end of the file is refused") {
    CHECK_THROWS_AS(Buffer::map_file(path, 9999, 2), std::system_error);
    CHECK_THROWS_AS(Buffer::map_file(path, SIZE_MAX, 2), std::system_error);
  }
  SECTION("a missing file reports errno") {
    try {
      Buffer::map_file(dir.file("missing.bin"), 0, 0);
      FAIL("no exception");
    } catch (const std::system_error& e) {
      CHECK(e.code().value() == ENOENT);
    }
  }
  SECTION("empty file") {
    write_bytes(dir.file("empty.bin"), "");
    CHECK(Buffer::map_file(dir.file("empty.bin"), 0, 0).size() == 0);
  }
}

TEST_CASE("Tensor::zeros sizes", "[tensor]") {
  Tensor t = Tensor::zeros(ElementType::f32, {2, 3, 4});
  CHECK(t.element_count() == 24);
  CHECK(t.byte_size() == 96);
  CHECK(t.buffer.size() == 96);
  CHECK(t.data<float>()[23] == 0.0f);
  t.mutable_data<float>()[5] = 2.5f;
  CHECK(t.data<float>()[5] == 2.5f);

  Tensor scalar = Tensor::zeros(ElementType::f64, {});
  CHECK(scalar.element_count() == 1);
  CHECK(scalar.byte_size() == 8);

  Tensor empty = Tensor::zeros(ElementType::i64, {3, 0, 5});
  CHECK(empty.element_count() == 0);
  CHECK(empty.byte_size() == 0);

  Tensor packed = Tensor::zeros(ElementType::u4, {3});
  CHECK(packed.byte_size() == 2);
}

TEST_CASE("Tensor::zeros and wrap reject overflowing sizes and negative dims", "[tensor]") {
  auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const irrun::Error& e) {
      return e.code();
    }
    return irrun::ExitCode::ok;
  };
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK(code_of([&] { Tensor::zeros(ElementType::f32, {big, big}); }) == irrun::ExitCode::limit);
  // Fits as an element count but not as a byte count.
  CHECK(code_of([&] { Tensor::zeros(ElementType::f64, {std::int64_t{1} << 62}); }) ==
        irrun::ExitCode::limit);
  // A negative dimension is the caller's mistake, not a size limit.
  CHECK(code_of([&] { Tensor::zeros(ElementType::f32, {-1}); }) == irrun::ExitCode::bad_input);
  float x[4] = {};
  CHECK(code_of([&] { Tensor::wrap(ElementType::f32, {2, -2}, x); }) == irrun::ExitCode::bad_input);
  const float* cx = x;
  CHECK(code_of([&] { Tensor::wrap(ElementType::f32, {-4}, cx); }) == irrun::ExitCode::bad_input);
  CHECK(Tensor::wrap(ElementType::f32, {2, 2}, cx).byte_size() == 16);
}

namespace {

// The Error a call throws: its code and message.
template <class F>
std::pair<irrun::ExitCode, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const irrun::Error& e) {
    return {e.code(), e.what()};
  }
  return {irrun::ExitCode::ok, ""};
}

}  // namespace

TEST_CASE("Tensor::zeros and wrap: a type without a fixed size is bad input", "[tensor]") {
  float x[4] = {};
  for (const auto type : {ElementType::undefined, ElementType::string}) {
    for (const auto& [code, what] : {error_of([&] { Tensor::zeros(type, {2}); }),
                                     error_of([&] { Tensor::wrap(type, {2}, x); }), error_of([&] {
                                       Tensor::wrap(type, {2}, static_cast<const float*>(x));
                                     })}) {
      INFO(what);
      CHECK(code == irrun::ExitCode::bad_input);
      CHECK_THAT(what, Catch::Contains("has no fixed size"));
    }
  }
}

TEST_CASE("Buffer::wrap and Tensor::wrap refuse a null pointer for a nonzero size", "[tensor]") {
  for (const auto& [code, what] :
       {error_of([] {
          Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, static_cast<float*>(nullptr));
        }),
        error_of([] { Tensor::wrap(ElementType::f32, {4}, static_cast<const void*>(nullptr)); }),
        error_of([] { Buffer::wrap(static_cast<void*>(nullptr), 1); })}) {
    INFO(what);
    CHECK(code == irrun::ExitCode::bad_input);
    CHECK_THAT(what, Catch::Contains("a null pointer for"));
  }
  CHECK(error_of([] {
          Tensor::wrap(ElementType::f32, {3, 0}, static_cast<float*>(nullptr));
        }).first == irrun::ExitCode::ok);
  CHECK(Buffer::wrap(static_cast<const void*>(nullptr), 0).size() == 0);
  // A bare nullptr picks neither the const nor the mutable overload: an empty writable view.
  CHECK(Tensor::wrap(ElementType::f32, {0}, nullptr).buffer.writable());
  CHECK(Buffer::wrap(nullptr, 0).writable());
  CHECK(error_of([] { Buffer::wrap(nullptr, 4); }).first == irrun::ExitCode::bad_input);
}

TEST_CASE("Tensor::element_count and byte_size of a hand-set shape do not wrap", "[tensor]") {
  Tensor t;
  t.type = ElementType::f32;
  t.shape = {2, -3};
  CHECK(error_of([&] { (void)t.element_count(); }).first == irrun::ExitCode::bad_input);
  CHECK(error_of([&] { (void)t.byte_size(); }).first == irrun::ExitCode::bad_input);
  t.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  CHECK(error_of([&] { (void)t.element_count(); }).first == irrun::ExitCode::limit);
  t.shape = {std::int64_t{1} << 62};  // fits as a count, not as bytes
  CHECK(t.element_count() == std::size_t{1} << 62);
  CHECK(error_of([&] { (void)t.byte_size(); }).first == irrun::ExitCode::limit);
  t.shape = {3, 4};
  CHECK(t.byte_size() == 48);
}

TEST_CASE("format_bytes", "[tensor]") {
  CHECK(irrun::format_bytes(768) == "768 bytes");
  CHECK(irrun::format_bytes(1536) == "1.5 KiB");
  CHECK(irrun::format_bytes(std::uint64_t{1} << 20) == "1.0 MiB");
  CHECK(irrun::format_bytes(std::uint64_t{120} << 30) == "120.0 GiB");
  // Under a C locale with a decimal comma, where installed (printf's %.1f said "1,0 MiB"); and
  // the global C++ locale's grouping, which std::to_string ignores.
  const std::string saved = std::setlocale(LC_NUMERIC, nullptr);
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8", "ru_RU.UTF-8"}) {
    if (!std::setlocale(LC_NUMERIC, name)) continue;
    INFO("LC_NUMERIC " << name);
    CHECK(irrun::format_bytes(std::uint64_t{1} << 20) == "1.0 MiB");
    break;
  }
  std::setlocale(LC_NUMERIC, saved.c_str());
  const irrun::testing::CommaLocale comma;
  REQUIRE(comma.probe() == "1.557 1,5");
  CHECK(irrun::format_bytes(1557) == "1.5 KiB");
  CHECK(irrun::format_bytes(999) == "999 bytes");
}
