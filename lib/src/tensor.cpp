#include "irrun/tensor.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "irrun/checked.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"

namespace irrun {
namespace {

constexpr std::size_t kAlignment = 64;

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

}  // namespace

Buffer Buffer::allocate(std::size_t bytes) {
  // Always allocate at least one aligned block so data() is non-null and aligned even for 0 bytes.
  const std::size_t rounded =
      bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) throw std::bad_alloc();
  void* p = ::operator new(rounded, std::align_val_t(kAlignment));
  std::memset(p, 0, rounded);
  Buffer b;
  b.owner_ =
      std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(kAlignment)); });
  b.data_ = static_cast<std::byte*>(p);
  b.size_ = bytes;
  b.writable_ = true;
  return b;
}

Buffer Buffer::map_file(const std::string& path, std::size_t offset, std::size_t size) {
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) throw errno_error(errno, path);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw errno_error(errno, path);
  if (S_ISDIR(st.st_mode)) throw errno_error(EISDIR, path);
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

Buffer Buffer::slice(std::size_t offset, std::size_t size) const {
  const auto end = checked_add(offset, size);
  if (!end || *end > size_) {
    throw std::out_of_range("Buffer::slice: [" + std::to_string(offset) + ", +" +
                            std::to_string(size) + ") outside a buffer of " +
                            std::to_string(size_) + " bytes");
  }
  Buffer b = *this;
  if (data_) b.data_ = data_ + offset;
  b.size_ = size;
  return b;
}

Tensor Tensor::zeros(ElementType type, std::vector<std::int64_t> shape) {
  const std::size_t bits = bit_width(type);
  const auto count = checked_product(shape);
  const auto total_bits = count ? checked_mul(*count, bits) : std::nullopt;
  if (bits == 0 || !total_bits || !checked_add(*total_bits, 7)) {
    throw Error(ExitCode::limit, "tensor " + std::string(to_string(type)) + " " + to_string(shape) +
                                     " is too large or has no fixed size");
  }
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  try {
    t.buffer = Buffer::allocate(packed_byte_size(type, *count));
  } catch (const std::bad_alloc&) {
    throw Error(ExitCode::limit, "cannot allocate " +
                                     std::to_string(packed_byte_size(type, *count)) +
                                     " bytes for a " + std::string(to_string(type)) + " " +
                                     to_string(t.shape) + " tensor");
  }
  return t;
}

std::size_t Tensor::element_count() const {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::size_t Tensor::byte_size() const {
  return packed_byte_size(type, element_count());
}

}  // namespace irrun
