#include "irrun/tensor.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "irrun/checked.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/number_text.hpp"

namespace irrun {
namespace {

constexpr std::size_t kAlignment = 64;

// Buffers of kHugeBytes or more come straight from the kernel, anonymous pages (zeroed), near a
// 2 MiB boundary and marked for transparent huge pages (madvise: where the system offers them so,
// as Debian's kernels do by default). S3's 12.8 MB in and 12.8 MB out span 6,250 pages of 4 KB,
// more than the TLBs hold. Against heap buffers (round 84, old and new binaries alternating):
// natively S5 0.91-0.95 of the time, S8 0.92-0.97, S3 0.975-1.005; S3 with the AVX2 cap
// 0.957-1.007; S9 0.93-1.04, the others 0.97-1.01, where this host swings by 3-4% between two runs.
// The tail past the last 2 MiB stays in small pages: no more memory than the bytes rounded up to a
// page.
constexpr std::size_t kHugeBytes = std::size_t{2} << 20;
// Each mapped buffer's data starts 0-7 steps of kColorBytes past its mapping's start, in turn, so
// that a layer's input and output do not share the low 21 bits of their addresses (planes of one
// index on the same cache sets), as two buffers on 2 MiB boundaries would; heap buffers had fallen
// anywhere. Against the same buffers unstaggered S3 took 0.947-1.007 of the time (round 84), within
// this host's noise.
constexpr std::size_t kColorBytes = 576;  // nine cache lines
std::atomic<unsigned> g_next_color{0};

// length: a multiple of the page size. Null if the kernel has no memory.
void* map_huge(std::size_t length) {
  if (length > SIZE_MAX - kHugeBytes) return nullptr;
  const std::size_t span = length + kHugeBytes;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (base + kHugeBytes - 1) / kHugeBytes * kHugeBytes,
                       end = start + length;
  if (start > base) ::munmap(m, start - base);
  if (base + span > end) ::munmap(reinterpret_cast<void*>(end), base + span - end);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);  // advice: may be refused
#endif
  return reinterpret_cast<void*>(start);
}

std::system_error errno_error(int err, const std::string& what) {
  return std::system_error(err, std::generic_category(), what);
}

// Closes a descriptor on every path out of map_file.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

std::atomic<std::uint64_t> g_memory_limit{0};
std::atomic<std::uint64_t> g_memory_in_use{0};
std::atomic<const char*> g_memory_setting{"set_memory_limit"};

}  // namespace

void set_memory_limit(std::uint64_t bytes, const char* setting) {
  g_memory_limit = bytes;
  g_memory_setting = setting;
}

std::uint64_t memory_limit() {
  return g_memory_limit;
}

std::uint64_t memory_in_use() {
  return g_memory_in_use;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  // Not printf's %.1f: that would print "1,0 MiB" under a C locale with a decimal comma.
  if (u == 0) return std::to_string(bytes) + " bytes";
  return fixed_text(v, 1) + " " + kUnits[u];
}

void require_memory(std::optional<std::uint64_t> bytes, const std::string& what) {
  const std::uint64_t limit = g_memory_limit;
  if (!bytes) throw Error(ExitCode::limit, what + " needs more than 2^64 bytes");
  if (limit == 0) return;
  const std::uint64_t in_use = g_memory_in_use;
  const auto total = checked_add(in_use, *bytes);
  if (!total || *total > limit) {
    std::string m = what + " needs " + format_bytes(*bytes);
    if (in_use) m += " more (" + format_bytes(in_use) + " in use)";
    m += ", over the memory limit of " + format_bytes(limit) + " (" +
         std::string(g_memory_setting.load()) + ")";
    throw Error(ExitCode::limit, m);
  }
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  const auto total =
      checked_mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
  if (!total) return 0;
  return *total / 4 * 3;
}

std::optional<std::uint64_t> parse_memory_size(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const auto next = checked_mul(v, 10);
    const auto sum = next ? checked_add(*next, static_cast<std::uint64_t>(text[i] - '0')) : next;
    if (!sum) return std::nullopt;
    v = *sum;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string suffix;
  for (char c : text.substr(i))
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() > 1 && (suffix.ends_with("IB") || suffix.ends_with("B")))
    suffix.resize(suffix.size() - (suffix.ends_with("IB") ? 2 : 1));
  static constexpr std::string_view kUnits = "KMGTPE";
  std::uint64_t scale = 1;
  if (suffix == "B") suffix.clear();
  if (!suffix.empty()) {
    const auto u = kUnits.find(suffix);
    if (suffix.size() != 1 || u == std::string_view::npos) return std::nullopt;
    scale = std::uint64_t{1} << (10 * (u + 1));
  }
  return checked_mul(v, scale);
}

Buffer Buffer::allocate(std::size_t bytes) {
  // Always allocate at least one aligned block so data() is non-null and aligned even for 0 bytes;
  // whole pages where the buffer is mapped, its colour's shift included.
  const bool mapped = bytes >= kHugeBytes;
  const std::size_t block = mapped ? static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) : kAlignment;
  const std::size_t shift = mapped ? kColorBytes * (g_next_color++ % 8) : 0;
  const std::size_t rounded =
      bytes == 0 ? block : (bytes + shift + block - 1) / block * block;  // wraps below bytes
  if (rounded < bytes) require_memory(std::nullopt, "a buffer");
  // Reserve the bytes first, so concurrent allocations cannot pass the limit together.
  const std::uint64_t limit = g_memory_limit;
  const std::uint64_t before = g_memory_in_use.fetch_add(rounded);
  if (limit != 0 && (before + rounded < before || before + rounded > limit)) {
    g_memory_in_use.fetch_sub(rounded);
    require_memory(rounded, "a buffer of " + std::to_string(bytes) + " bytes");
    // Lost a race with another allocation that has since been released: still over, report it.
    throw Error(ExitCode::limit, "a buffer of " + std::to_string(bytes) +
                                     " bytes would exceed the memory limit of " +
                                     format_bytes(limit) + " (" +
                                     std::string(g_memory_setting.load()) + ")");
  }
  void* p = nullptr;
  if (mapped) {
    p = map_huge(rounded);
  } else {
    try {
      p = ::operator new(rounded, std::align_val_t(kAlignment));
      std::memset(p, 0, rounded);
    } catch (const std::bad_alloc&) {  // p stays null
    }
  }
  if (!p) {
    g_memory_in_use.fetch_sub(rounded);
    throw Error(ExitCode::limit, "out of memory allocating " + format_bytes(rounded) + " (" +
                                     format_bytes(g_memory_in_use) + " in use; see " +
                                     std::string(g_memory_setting.load()) + ")");
  }
  Buffer b;
  b.owner_ = std::shared_ptr<void>(p, [rounded, mapped](void* q) {
    if (mapped)
      ::munmap(q, rounded);
    else
      ::operator delete(q, std::align_val_t(kAlignment));
    g_memory_in_use.fetch_sub(rounded);
  });
  b.data_ = static_cast<std::byte*>(p) + shift;
  b.size_ = bytes;
  b.writable_ = true;
  return b;
}

Buffer Buffer::map_file(const std::string& path, std::size_t offset, std::size_t size) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise block forever.
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.fd < 0) throw errno_error(errno, path);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw errno_error(errno, path);
  if (S_ISDIR(st.st_mode)) throw errno_error(EISDIR, path);
  // FIFOs, sockets and devices have no fixed size to map (and /dev/zero never ends).
  if (!S_ISREG(st.st_mode)) throw errno_error(EINVAL, path + ": not a regular file");
  const auto end = checked_add(offset, size);
  // Touching a mapped page past EOF raises SIGBUS, so the range must lie inside the file.
  if (!end || *end > static_cast<std::uint64_t>(st.st_size))
    throw errno_error(EINVAL, path + ": range beyond end of file");
  Buffer b;
  if (size == 0) return b;  // mmap rejects length 0; an empty buffer needs no memory

  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t aligned = offset / page * page;
  const std::size_t lead = offset - aligned;
  const std::size_t length = lead + size;
  void* p = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd.fd, static_cast<off_t>(aligned));
  if (p == MAP_FAILED) throw errno_error(errno, path);
  b.owner_ = std::shared_ptr<void>(p, [length](void* q) { ::munmap(q, length); });
  b.data_ = static_cast<std::byte*>(p) + lead;
  b.size_ = size;
  b.writable_ = false;
  return b;
}

Buffer Buffer::wrap(void* data, std::size_t size) {
  Buffer b = wrap(static_cast<const void*>(data), size);
  b.writable_ = true;
  return b;
}

Buffer Buffer::wrap(const void* data, std::size_t size) {
  if (!data && size)
    throw input_error("Buffer::wrap: a null pointer for " + std::to_string(size) + " bytes");
  Buffer b;
  // No owner: copies and slices share nothing but the caller's pointer.
  b.data_ = static_cast<std::byte*>(const_cast<void*>(data));
  b.size_ = size;
  b.writable_ = false;
  return b;
}

Buffer Buffer::slice(std::size_t offset, std::size_t size) const {
  const auto end = checked_add(offset, size);
  if (!end || *end > size_) {
    throw input_error("Buffer::slice: [" + std::to_string(offset) + ", +" + std::to_string(size) +
                      ") outside a buffer of " + std::to_string(size_) + " bytes");
  }
  Buffer b = *this;
  if (data_) b.data_ = data_ + offset;
  b.size_ = size;
  return b;
}

namespace {

// The packed byte size of `shape`, or Error(limit) when it overflows.
std::size_t packed_size(ElementType type, const std::vector<std::int64_t>& shape) {
  if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; }))
    throw Error(ExitCode::bad_input, "tensor " + std::string(to_string(type)) + " " +
                                         to_string(shape) + " has a negative dimension");
  const std::size_t bits = bit_width(type);
  if (bits == 0)
    throw input_error("tensor " + std::string(to_string(type)) + " " + to_string(shape) +
                      ": element type " + std::string(to_string(type)) + " has no fixed size");
  const auto count = checked_product(shape);
  const auto total_bits = count ? checked_mul(*count, bits) : std::nullopt;
  if (!total_bits || !checked_add(*total_bits, 7))
    throw Error(ExitCode::limit, "tensor " + std::string(to_string(type)) + " " + to_string(shape) +
                                     " is too large");
  return packed_byte_size(type, *count);
}

}  // namespace

Tensor Tensor::zeros(ElementType type, std::vector<std::int64_t> shape) {
  const std::size_t bytes = packed_size(type, shape);
  require_memory(bytes, "a " + std::string(to_string(type)) + " " + to_string(shape) + " tensor");
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.buffer = Buffer::allocate(bytes);
  return t;
}

Tensor Tensor::wrap(ElementType type, std::vector<std::int64_t> shape, void* data) {
  Tensor t;
  t.buffer = Buffer::wrap(data, packed_size(type, shape));
  t.type = type;
  t.shape = std::move(shape);
  return t;
}

Tensor Tensor::wrap(ElementType type, std::vector<std::int64_t> shape, const void* data) {
  Tensor t;
  t.buffer = Buffer::wrap(data, packed_size(type, shape));
  t.type = type;
  t.shape = std::move(shape);
  return t;
}

std::size_t Tensor::element_count() const {
  // A shape set by hand may be anything: no wrapped product.
  const auto n = checked_product(shape);
  if (!n) {
    if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; }))
      throw input_error("tensor shape " + to_string(shape) + " has a negative dimension");
    throw Error(ExitCode::limit, "tensor shape " + to_string(shape) + " is too large");
  }
  return *n;
}

std::size_t Tensor::byte_size() const {
  const std::size_t n = element_count();
  if (!checked_mul(n, bit_width(type)))
    throw Error(ExitCode::limit, "tensor " + std::string(to_string(type)) + " " + to_string(shape) +
                                     " is too large");
  return packed_byte_size(type, n);
}

}  // namespace irrun
