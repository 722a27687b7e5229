#include "irrun/npy.hpp"

#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "irrun/checked.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/file_io.hpp"

namespace irrun {
namespace {

static_assert(std::endian::native == std::endian::little, "irrun assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy itself refuses headers over 10000 bytes by default; allow more but stay bounded so a
// hostile length field cannot make parsing expensive.
constexpr std::size_t kMaxHeaderLen = 1 << 20;
constexpr std::size_t kMaxRank = 64;              // NPY_MAXDIMS in numpy 2.x
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // numpy pads headers for in-place growth
constexpr std::size_t kArrayAlign = 64;

struct DtypeInfo {
  char kind;
  int size;
  ElementType type;
};

constexpr DtypeInfo kDtypes[] = {
    {'f', 2, ElementType::f16}, {'f', 4, ElementType::f32}, {'f', 8, ElementType::f64},
    {'i', 1, ElementType::i8},  {'i', 2, ElementType::i16}, {'i', 4, ElementType::i32},
    {'i', 8, ElementType::i64}, {'u', 1, ElementType::u8},  {'u', 2, ElementType::u16},
    {'u', 4, ElementType::u32}, {'u', 8, ElementType::u64}, {'b', 1, ElementType::boolean},
};

// Python's repr of a shape tuple: "()", "(3,)", "(2, 3)".
std::string python_tuple(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ',';
  return s + ")";
}

// Quotes untrusted header text for an error message, shortened and with non-printables escaped.
std::string quote(std::string_view v) {
  std::string s = "'";
  for (std::size_t i = 0; i < v.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      s += buf;
    }
  }
  if (v.size() > 40) s += "...";
  return s + "'";
}

std::optional<ElementType> dtype_from_descr(std::string_view d, const std::string& name) {
  if (d.size() < 3) return std::nullopt;
  const char order = d[0];
  const char kind = d[1];
  int size = 0;
  for (char c : d.substr(2)) {
    if (c < '0' || c > '9' || size > 1000) return std::nullopt;
    size = size * 10 + (c - '0');
  }
  for (const auto& info : kDtypes) {
    if (info.kind != kind || info.size != size) continue;
    // Byte order is meaningless for one-byte types; numpy writes '|' but accepts the others.
    if (size == 1 && (order == '<' || order == '>' || order == '|' || order == '='))
      return info.type;
    if (order == '<') return info.type;
    if (order == '>') {
      throw input_error(name + ": big-endian dtype " + quote(d) +
                        " is not supported (save little-endian data, e.g. arr.astype('<" + kind +
                        std::to_string(size) + "'))");
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Parser for the Python dict literal numpy writes, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  void parse(NpyHeader& h) {
    bool have_descr = false, have_order = false, have_shape = false;
    bool fortran = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (!eat('}')) {
      const std::string key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        have_descr = true;
        if (peek() == '[') {
          throw input_error(name_ + ": structured dtypes are not supported (descr is a list)");
        }
        h.descr = parse_string();
      } else if (key == "fortran_order") {
        if (have_order) fail("duplicate key 'fortran_order'");
        have_order = true;
        fortran = parse_bool();
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        have_shape = true;
        h.shape = parse_tuple();
      } else {
        fail("unexpected key " + quote(key));
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after '}'");
    if (!have_descr) fail("missing key 'descr'");
    if (!have_order) fail("missing key 'fortran_order'");
    if (!have_shape) fail("missing key 'shape'");

    const auto type = dtype_from_descr(h.descr, name_);
    if (!type) {
      throw input_error(name_ + ": unsupported dtype " + quote(h.descr) +
                        " (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian)");
    }
    h.type = *type;
    // numpy writes True only for arrays that are not C-contiguous, i.e. a transposed layout.
    if (fortran) {
      throw input_error(name_ +
                        ": fortran_order=True is not supported (save a C-ordered array, "
                        "e.g. np.ascontiguousarray)");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(name_ + ": malformed .npy header: " + what + " at header offset " +
                      std::to_string(pos_));
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  std::string parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    ++pos_;
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\' || s_[pos_] == '\n') fail("unsupported character in string");
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    std::string v(s_.substr(start, pos_ - start));
    ++pos_;
    return v;
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<std::int64_t> parse_tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    skip_ws();
    while (!eat(')')) {
      if (dims.size() >= kMaxRank) fail("more than " + std::to_string(kMaxRank) + " dimensions");
      dims.push_back(parse_int());
      skip_ws();
      // Python 2 numpy wrote long integers with an 'L' suffix.
      if (eat('L')) skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in shape");
      }
    }
    // "(3)" is not a tuple in Python; numpy never writes it.
    return dims;
  }
  std::int64_t parse_int() {
    if (peek() == '-') fail("negative dimension");
    if (peek() < '0' || peek() > '9') fail("expected a dimension");
    std::int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (v > (INT64_MAX - digit) / 10) fail("dimension too large");
      v = v * 10 + digit;
      ++pos_;
    }
    return v;
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

const DtypeInfo* dtype_for(ElementType type) {
  for (const auto& info : kDtypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

std::string descr_for(ElementType type) {
  if (type == ElementType::bf16) return "<f4";
  const auto* info = dtype_for(type);
  if (!info) {
    throw Error(ExitCode::unsupported,
                "element type " + std::string(to_string(type)) + " has no .npy dtype");
  }
  return std::string(1, info->size == 1 ? '|' : '<') + info->kind + std::to_string(info->size);
}

}  // namespace

NpyHeader parse_npy_header(std::span<const std::byte> file, const std::string& name) {
  const auto* p = reinterpret_cast<const unsigned char*>(file.data());
  const std::string_view bytes(reinterpret_cast<const char*>(file.data()), file.size());
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    throw input_error(name + ": not an .npy file (missing \\x93NUMPY magic)");
  }
  if (bytes.size() < 8) throw input_error(name + ": truncated .npy header (no version)");
  const int major = p[6], minor = p[7];
  std::size_t len_size;
  if (major == 1 && minor == 0) {
    len_size = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    len_size = 4;
  } else {
    throw input_error(name + ": unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t prefix = 8 + len_size;
  if (bytes.size() < prefix) throw input_error(name + ": truncated .npy header (no length)");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_size; ++i) header_len |= std::size_t{p[8 + i]} << (8 * i);
  if (header_len > kMaxHeaderLen) {
    throw input_error(name + ": .npy header length " + std::to_string(header_len) +
                      " exceeds the limit of " + std::to_string(kMaxHeaderLen) + " bytes");
  }
  if (bytes.size() - prefix < header_len) {
    throw input_error(name + ": truncated .npy header (declares " + std::to_string(header_len) +
                      " bytes, file has " + std::to_string(bytes.size() - prefix) +
                      " after the preamble)");
  }

  NpyHeader h;
  HeaderParser(bytes.substr(prefix, header_len), name).parse(h);
  h.data_offset = prefix + header_len;
  const auto count = checked_product(h.shape);
  const auto size =
      count ? checked_mul(*count, static_cast<std::uint64_t>(bit_width(h.type) / 8)) : std::nullopt;
  if (!size) {
    throw input_error(name + ": shape " + python_tuple(h.shape) + " of dtype " + quote(h.descr) +
                      " overflows 64-bit sizes");
  }
  h.data_size = *size;
  return h;
}

Tensor read_npy(const std::string& path) {
  return read_npy(read_file(path), path);
}

Tensor read_npy(const Buffer& file, const std::string& path) {
  const NpyHeader h = parse_npy_header({file.data(), file.size()}, path);
  const std::size_t found = file.size() - h.data_offset;
  if (found != h.data_size) {
    throw input_error(path + ": expected " + std::to_string(h.data_size) + " data bytes (" +
                      std::string(to_string(h.type)) + " " + to_string(h.shape) + "), found " +
                      std::to_string(found) +
                      (found < h.data_size ? " (file too short)" : " (trailing bytes)"));
  }
  Tensor t;
  t.type = h.type;
  t.shape = h.shape;
  t.buffer = file.slice(h.data_offset, h.data_size);
  // numpy aligns data to 64 (16 in old versions) bytes; a hand-made header might not, and typed
  // access to misaligned elements is undefined behaviour, so only then copy.
  const std::size_t item = bit_width(h.type) / 8;
  if (reinterpret_cast<std::uintptr_t>(t.buffer.data()) % item != 0) {
    Buffer copy = Buffer::allocate(h.data_size);
    std::memcpy(copy.mutable_data(), t.buffer.data(), h.data_size);
    t.buffer = copy;
  }
  return t;
}

std::string npy_header(ElementType type, const std::vector<std::int64_t>& shape) {
  // Byte-for-byte what numpy.save (format.py, _write_array_header) writes.
  std::string dict = "{'descr': '" + descr_for(type) +
                     "', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const std::size_t hlen = dict.size() + 1;  // + '\n'
  auto wrap = [&](int major, std::size_t len_size) {
    const std::size_t pad = kArrayAlign - (kMagic.size() + 2 + len_size + hlen) % kArrayAlign;
    const std::size_t total = hlen + pad;
    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < len_size; ++i) out += static_cast<char>((total >> (8 * i)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  };
  std::string v1 = wrap(1, 2);
  if (v1.size() - 10 <= 0xffff) return v1;
  return wrap(2, 4);  // numpy also falls back to 2.0 when the header outgrows 16 bits
}

void write_npy(const std::string& path, const Tensor& t, FileBatch* batch) {
  const std::string header = npy_header(t.type, t.shape);
  const auto header_bytes = std::as_bytes(std::span(header));
  if (t.type != ElementType::bf16) {
    write_file_atomically(path, header_bytes, {t.buffer.data(), t.byte_size()}, batch);
    return;
  }
  // bf16 is the top half of an f32, so widening is a 16-bit shift and exact; done a piece at a
  // time on the way out (a whole f32 copy was twice the tensor, past a run's 64 MiB).
  constexpr std::size_t kPiece = std::size_t{1} << 16;
  const std::size_t n = t.element_count();
  const auto* src = t.buffer.data();
  std::vector<std::uint32_t> wide(std::min(n, kPiece));
  write_file_atomically_from(
      path, header_bytes,
      [&](const auto& put) {
        for (std::size_t i = 0; i < n; i += kPiece) {
          const std::size_t m = std::min(kPiece, n - i);
          for (std::size_t k = 0; k < m; ++k) {
            std::uint16_t b;
            std::memcpy(&b, src + 2 * (i + k), 2);
            wide[k] = std::uint32_t{b} << 16;
          }
          if (!put(std::as_bytes(std::span(wide.data(), m)))) return;  // a write failed
        }
      },
      batch);
}

bool is_npy_path(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  return ext.size() == 4 && ext[0] == '.' &&
         std::tolower(static_cast<unsigned char>(ext[1])) == 'n' &&
         std::tolower(static_cast<unsigned char>(ext[2])) == 'p' &&
         std::tolower(static_cast<unsigned char>(ext[3])) == 'y';
}

}  // namespace irrun
