#include "irrun/npy.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "irrun/blob.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using irrun::ElementType;
using irrun::Tensor;

using TempDir = irrun::testing::ScratchDir;

using irrun::testing::read_text;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// An .npy preamble with the given version and header text, used verbatim (no padding added).
std::string preamble(int major, const std::string& header) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t len_size = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_size; ++i)
    s += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return s + header;
}

irrun::NpyHeader parse(const std::string& file) {
  return irrun::parse_npy_header(std::as_bytes(std::span(file)), "x.npy");
}

std::string bytes_of(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.buffer.data()), t.byte_size());
}

}  // namespace

TEST_CASE("npy_header matches numpy.save byte for byte", "[npy]") {
  // np.save of np.zeros((2, 3), np.float32) with numpy >= 1.23 (and 2.x).
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                         std::string(58, ' ') + "\n";
  REQUIRE(expected.size() == 128);
  CHECK(irrun::npy_header(ElementType::f32, {2, 3}) == expected);

  const std::string scalar = irrun::npy_header(ElementType::f64, {});
  CHECK(scalar.size() == 128);
  CHECK(scalar.substr(10, 55) == "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");

  CHECK(irrun::npy_header(ElementType::u8, {7}).find("'descr': '|u1'") != std::string::npos);
  CHECK(irrun::npy_header(ElementType::boolean, {7}).find("'|b1'") != std::string::npos);
  CHECK(irrun::npy_header(ElementType::bf16, {7}).find("'<f4'") != std::string::npos);
  CHECK(irrun::npy_header(ElementType::i16, {7}).find("'shape': (7,), }") != std::string::npos);
  for (auto shape : {std::vector<std::int64_t>{}, {1}, {123456789012}, {1, 2, 3, 4, 5}}) {
    CHECK(irrun::npy_header(ElementType::i32, shape).size() % 64 == 0);
  }
  CHECK_THROWS_AS(irrun::npy_header(ElementType::i4, {2}), irrun::Error);
}

TEST_CASE("npy round trip for every element type", "[npy]") {
  TempDir dir("npy");
  const std::vector<std::int64_t> shape{2, 3, 5};
  for (auto type : {ElementType::f32, ElementType::f16, ElementType::f64, ElementType::i8,
                    ElementType::i16, ElementType::i32, ElementType::i64, ElementType::u8,
                    ElementType::u16, ElementType::u32, ElementType::u64, ElementType::boolean}) {
    INFO(irrun::to_string(type));
    const Tensor t = irrun::random_tensor(type, shape, 42);
    const auto path = dir.file(std::string(irrun::to_string(type)) + ".npy");
    irrun::write_npy(path, t);
    CHECK(read_text(path).size() == 128 + t.byte_size());
    const Tensor r = irrun::read_npy(path);
    CHECK(r.type == type);
    CHECK(r.shape == shape);
    CHECK(bytes_of(r) == bytes_of(t));
    CHECK_FALSE(r.buffer.writable());  // a view of the mapping, not a copy
  }
}

TEST_CASE("npy writes bf16 as exactly widened f32", "[npy]") {
  TempDir dir("npy");
  // Small, and past the pieces it is widened in (2^16 values) with a piece's part over.
  for (const std::int64_t rows : {1, 9001}) {
    const Tensor t = irrun::random_tensor(ElementType::bf16, {rows, 4, 4}, 7);
    irrun::write_npy(dir.file("b.npy"), t);
    const Tensor r = irrun::read_npy(dir.file("b.npy"));
    REQUIRE(r.type == ElementType::f32);
    REQUIRE(r.shape == t.shape);
    int wrong = 0;
    for (std::size_t i = 0; i < t.element_count(); ++i)
      wrong += static_cast<double>(r.data<float>()[i]) !=
               irrun::bf16_bits_to_double(t.data<std::uint16_t>()[i]);
    CHECK(wrong == 0);
  }
}

TEST_CASE("npy scalars and empty arrays", "[npy]") {
  TempDir dir("npy");
  Tensor s = Tensor::zeros(ElementType::f64, {});
  s.mutable_data<double>()[0] = -3.25;
  irrun::write_npy(dir.file("s.npy"), s);
  const Tensor r = irrun::read_npy(dir.file("s.npy"));
  CHECK(r.shape.empty());
  CHECK(r.data<double>()[0] == -3.25);

  irrun::write_npy(dir.file("e.npy"), Tensor::zeros(ElementType::i32, {0, 4}));
  const Tensor e = irrun::read_npy(dir.file("e.npy"));
  CHECK(e.shape == std::vector<std::int64_t>{0, 4});
  CHECK(e.byte_size() == 0);
}

TEST_CASE("npy header parsing accepts what numpy writes", "[npy]") {
  struct Case {
    int major;
    std::string header;
    ElementType type;
    std::vector<std::int64_t> shape;
  };
  const Case cases[] = {
      // numpy < 1.23: no growth padding, 16-byte alignment.
      {1,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n",
       ElementType::f32,
       {2, 3}},
      {1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,)}\n", ElementType::i64, {4}},
      {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", ElementType::f64, {}},
      {1,
       "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"|u1\"}",
       ElementType::u8,
       {1, 2}},
      // Python 2 longs.
      {1,
       "{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L), }\n",
       ElementType::f64,
       {3, 2}},
      {1,
       "{ 'descr' : '<f2' , 'fortran_order' : False , 'shape' : ( 5 , ) , }  \n",
       ElementType::f16,
       {5}},
      {1,
       "\t{'descr':'|b1','fortran_order':False,'shape':(0,3)}\r\n",
       ElementType::boolean,
       {0, 3}},
      {2, "{'descr': '<u2', 'fortran_order': False, 'shape': (6,), }\n", ElementType::u16, {6}},
      {3,
       "{'descr': '<u4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }\n",
       ElementType::u32,
       {1, 1, 1, 1, 1}},
      {1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }\n", ElementType::u64, {2}},
      {1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }\n", ElementType::i8, {2}},
      {1, "{'descr': '<i1', 'fortran_order': False, 'shape': (2,), }\n", ElementType::i8, {2}},
      {1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }\n", ElementType::u8, {2}},
      {1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }\n", ElementType::i16, {2}},
      {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", ElementType::i32, {2}},
  };
  for (const auto& c : cases) {
    INFO(c.header);
    const std::string file = preamble(c.major, c.header);
    const auto h = parse(file);
    CHECK(h.type == c.type);
    CHECK(h.shape == c.shape);
    CHECK(h.data_offset == file.size());
    CHECK(h.data_size == irrun::packed_byte_size(c.type, [&] {
            std::size_t n = 1;
            for (auto d : c.shape) n *= static_cast<std::size_t>(d);
            return n;
          }()));
  }
}

TEST_CASE("npy header parsing rejects malformed headers clearly", "[npy]") {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  auto with = [](const std::string& descr, const std::string& order, const std::string& shape) {
    return preamble(
        1, "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }\n");
  };
  struct Case {
    std::string name;
    std::string file;
    std::string message;
  };
  const std::string huge_len = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + ok;
  std::string many_dims = "(";
  for (int i = 0; i < 65; ++i) many_dims += "1,";
  many_dims += ")";
  const Case cases[] = {
      {"empty file", "", "x.npy: not an .npy file"},
      {"bad magic", "\x93NUMPZ\x01\x00" + ok, "not an .npy file"},
      {"magic only", "\x93NUMPY", "truncated .npy header (no version)"},
      {"no length", std::string("\x93NUMPY\x01\x00\x10", 9), "truncated .npy header (no length)"},
      {"truncated header", preamble(1, ok).substr(0, 40),
       "truncated .npy header (declares 60 bytes, file has 30"},
      {"version 4.0", "\x93NUMPY\x04" + preamble(1, ok).substr(7),
       "unsupported .npy format version 4.0"},
      {"version 1.1", "\x93NUMPY\x01\x01" + preamble(1, ok).substr(8),
       "unsupported .npy format version 1.1"},
      {"header too long", huge_len, "header length 4294967295 exceeds the limit"},
      {"big-endian", with("'>f4'", "False", "(2,)"), "big-endian dtype '>f4' is not supported"},
      {"fortran order", with("'<f4'", "True", "(2, 3)"), "fortran_order=True is not supported"},
      {"complex", with("'<c8'", "False", "(2,)"), "unsupported dtype '<c8'"},
      {"unicode", with("'<U10'", "False", "(2,)"), "unsupported dtype '<U10'"},
      {"object", with("'|O'", "False", "(2,)"), "unsupported dtype '|O'"},
      {"native order", with("'=f4'", "False", "(2,)"), "unsupported dtype '=f4'"},
      {"huge itemsize", with("'<f99999999999'", "False", "(2,)"), "unsupported dtype '<f9999"},
      {"binary junk in descr", with("'\x01\xff'", "False", "(2,)"),
       "unsupported dtype '\\x01\\xff'"},
      {"structured", with("[('a', '<f4')]", "False", "(2,)"), "structured dtypes"},
      {"shape overflow", with("'<f8'", "False", "(4294967296, 4294967296)"),
       "shape (4294967296, 4294967296) of dtype '<f8' overflows"},
      {"bytes overflow", with("'<f8'", "False", "(4611686018427387904,)"), "overflows"},
      {"dimension too large", with("'<f4'", "False", "(99999999999999999999,)"),
       "dimension too large"},
      {"negative dimension", with("'<f4'", "False", "(-1,)"), "negative dimension"},
      {"too many dims", with("'<f4'", "False", many_dims), "more than 64 dimensions"},
      {"shape not a tuple", with("'<f4'", "False", "[2, 3]"), "expected '('"},
      {"bad bool", with("'<f4'", "false", "(2,)"), "expected True or False"},
      {"missing key", preamble(1, "{'descr': '<f4', 'fortran_order': False}\n"),
       "missing key 'shape'"},
      {"extra key", preamble(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"),
       "unexpected key 'x'"},
      {"duplicate key", preamble(1, "{'descr': '<f4', 'descr': '<f4'}"), "duplicate key 'descr'"},
      {"unterminated string", preamble(1, "{'descr': '<f4"), "unterminated string"},
      {"not a dict", preamble(1, "[1, 2]\n"), "expected '{'"},
      {"unclosed dict", preamble(1, "{'descr': '<f4', "), "expected a quoted string"},
      {"text after dict", preamble(1, ok + "x"), "unexpected text after '}'"},
      {"missing comma", preamble(1, "{'descr': '<f4' 'shape': ()}"), "expected ',' or '}'"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    try {
      parse(c.file);
      FAIL("accepted");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::bad_input);
      CHECK_THAT(e.what(), Catch::Contains(c.message) && Catch::StartsWith("x.npy: "));
    }
  }
}

TEST_CASE("npy data size must match the header exactly", "[npy]") {
  TempDir dir("npy");
  const std::string head = irrun::npy_header(ElementType::f32, {2, 3});
  const auto path = dir.file("d.npy");
  auto message = [&](std::size_t data_bytes) {
    write_bytes(path, head + std::string(data_bytes, '\0'));
    try {
      irrun::read_npy(path);
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message(20) == path + ": expected 24 data bytes (f32 [2,3]), found 20 (file too short)");
  CHECK(message(25) == path + ": expected 24 data bytes (f32 [2,3]), found 25 (trailing bytes)");
  CHECK(message(0) == path + ": expected 24 data bytes (f32 [2,3]), found 0 (file too short)");
  CHECK(message(24) == "accepted");

  CHECK_THROWS_WITH(irrun::read_npy(dir.file("missing.npy")),
                    Catch::EndsWith("missing.npy: cannot open: No such file or directory"));
}

TEST_CASE("npy data at a misaligned offset is copied to aligned memory", "[npy]") {
  TempDir dir("npy");
  // Header length 61 puts the data at offset 71, misaligned for f32.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }   \n";
  REQUIRE(header.size() == 61);
  const float values[2] = {1.5f, -2.0f};
  write_bytes(dir.file("m.npy"),
              preamble(1, header) + std::string(reinterpret_cast<const char*>(values), 8));
  const Tensor t = irrun::read_npy(dir.file("m.npy"));
  CHECK(reinterpret_cast<std::uintptr_t>(t.buffer.data()) % 4 == 0);
  CHECK(t.data<float>()[0] == 1.5f);
  CHECK(t.data<float>()[1] == -2.0f);
}

TEST_CASE("npy header parser survives mutated headers", "[npy]") {
  // Deterministic mutation fuzzing: any outcome but a crash or a non-irrun exception is fine.
  const std::string base =
      preamble(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n");
  std::mt19937_64 rng(1234);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string f = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t pos = rng() % f.size();
      switch (rng() % 3) {
        case 0:
          f[pos] = static_cast<char>(rng());
          break;
        case 1:
          f.erase(pos, 1);
          break;
        default:
          f.insert(pos, 1, "(),:'0123456789 {}TF"[rng() % 20]);
          break;
      }
    }
    try {
      parse(f);
      ++accepted;
    } catch (const irrun::Error& e) {
      REQUIRE(e.code() == irrun::ExitCode::bad_input);
    }
  }
  CHECK(accepted < 20000);
}

TEST_CASE("is_npy_path: the extension .npy in any case", "[npy]") {
  for (const char* yes : {"x.npy", "X.NPY", "dir.d/a.Npy", "/tmp/in.nPy"}) {
    INFO(yes);
    CHECK(irrun::is_npy_path(yes));
  }
  for (const char* no : {"x.bin", "x.npy.bin", "npy", "x.npz", "x.np", ".npy", "dir.npy/x"}) {
    INFO(no);
    CHECK_FALSE(irrun::is_npy_path(no));
  }
}
