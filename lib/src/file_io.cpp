#include "irrun/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "irrun/error.hpp"

namespace irrun {
namespace {

std::string reason(int err) {
  return std::generic_category().message(err);
}

[[noreturn]] void fail_write(const std::string& path, int err) {
  throw output_error(path + ": cannot write: " + reason(err));
}

bool write_all(int fd, std::span<const std::byte> data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data = data.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

// The temporary files being written, for remove_temporary_files(): a signal handler reads these
// slots, so they are lock-free atomics, and a path stays alive while its slot holds it.
// 4096: a golden directory's files wait in a FileBatch until all are written (a run of more
// outputs keeps the temporary files past that many on a signal).
std::array<std::atomic<const char*>, 4096> in_progress{};
static_assert(std::atomic<const char*>::is_always_lock_free);

// A slot is taken before the temporary file is created and holds its path from before open()
// on: a signal that arrives as soon as the file exists (a preempted writer's first moment back
// from open, under load) must find it. A taken slot without a path holds "", which the handler
// skips.
class InProgress {
 public:
  InProgress() {
    for (auto& s : in_progress) {
      const char* empty = nullptr;
      if (s.compare_exchange_strong(empty, kNone)) {
        slot_ = &s;
        return;
      }
    }  // more writes at once than slots: this one is not cleaned up on a signal
  }
  ~InProgress() {
    if (slot_) slot_->store(nullptr);
  }
  InProgress(const InProgress&) = delete;
  InProgress& operator=(const InProgress&) = delete;

  // `path` stays alive until the next set() or the destructor; nullptr: no path.
  void set(const char* path) {
    if (slot_) slot_->store(path ? path : kNone);
  }

 private:
  static constexpr const char* kNone = "";
  std::atomic<const char*>* slot_ = nullptr;
};

// Creates a new file "<dir>/.<name>.tmp.<unique>". open(O_EXCL) with mode 0666 rather than
// mkstemp's 0600, so the final file gets the usual umask-derived permissions.
int create_temp(const std::filesystem::path& dir, const std::string& name, std::string& tmp_path,
                InProgress& registered) {
  static std::atomic<std::uint64_t> counter{0};
  // Keep the temporary name under NAME_MAX even for long output names.
  // (Built by appending: GCC 12 warns spuriously (-Wrestrict) on "." + std::string&&.)
  std::string stem(1, '.');
  stem.append(name, 0, 200);
  stem += ".tmp.";
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto ticks =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    char unique[64];
    std::snprintf(unique, sizeof unique, "%ld.%llx.%llx", static_cast<long>(::getpid()),
                  static_cast<unsigned long long>(counter.fetch_add(1)),
                  static_cast<unsigned long long>(ticks & 0xffffff));
    registered.set(nullptr);  // before tmp_path's buffer changes
    tmp_path = (dir / (stem + unique)).string();
    registered.set(tmp_path.c_str());
    const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    registered.set(nullptr);  // not ours (EEXIST) or not made
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

// A device or FIFO (/dev/null, /dev/stdout, a pipe) is written as it is: renaming a file over
// it would replace the device node itself. O_NONBLOCK: a FIFO without a reader fails (ENXIO)
// rather than waiting for one; the writes then block as usual.
// Writes header and the body's pieces to fd; false with errno set at the first failure (the
// pieces after it are passed over, and put tells the body so).
bool write_all(int fd, std::span<const std::byte> header, const BodyPieces& body) {
  if (!write_all(fd, header)) return false;
  int err = 0;
  body([&](std::span<const std::byte> piece) {
    if (!err && !write_all(fd, piece)) err = errno;
    return err == 0;
  });
  errno = err;
  return err == 0;
}

void write_in_place(const std::string& path, std::span<const std::byte> header,
                    const BodyPieces& body) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail_write(path, errno);
  int err = 0;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) err = errno;
  try {
    if (!err && !write_all(fd, header, body)) err = errno;
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && !err) err = errno;
  if (err) fail_write(path, err);
}

// read_file's checks: a regular file (FIFOs and devices cannot be mapped and may never end).
void check_regular(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) throw input_error(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) throw input_error(path + ": not a regular file");
}

}  // namespace

Buffer read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw input_error(path + ": cannot open: " + reason(errno));
  check_regular(path, st);
  try {
    return Buffer::map_file(path, 0, static_cast<std::size_t>(st.st_size));
  } catch (const std::system_error& e) {
    // Lost a race with a writer (file replaced or truncated) or unreadable (EACCES).
    throw input_error(path + ": cannot open: " + reason(e.code().value()));
  }
}

void read_file_chunks(const std::string& path,
                      const std::function<void(std::span<const std::byte>)>& chunk) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then rejects it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw input_error(path + ": cannot open: " + reason(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw input_error(path + ": cannot open: " + reason(errno));
  check_regular(path, st);
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw input_error(path + ": cannot read: " + reason(errno));
    if (n == 0) return;
    chunk(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n)));
  }
}

void make_directories(const std::filesystem::path& dir, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw output_error(dir.string() + ": " + what + " is not a directory");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw output_error(dir.string() + ": cannot create " + what + ": " + ec.message());
}

// A complete temporary file waiting for its rename (FileBatch), registered for a signal's
// cleanup until then.
struct FileBatch::Staged {
  std::string path, tmp;
  std::filesystem::path target, dir;
  InProgress registered;
};

namespace {

// Persists a rename in `dir`; best effort, the data is already complete under its final name.
void sync_directory(const std::filesystem::path& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

FileBatch::FileBatch() = default;

FileBatch::~FileBatch() {
  for (const auto& s : staged_) ::unlink(s->tmp.c_str());  // renamed ones are gone: harmless
}

void FileBatch::publish() {
  for (std::size_t i = 0; i < staged_.size(); ++i) {
    const Staged& s = *staged_[i];
    if (::rename(s.tmp.c_str(), s.target.c_str()) != 0) {
      const int err = errno;
      staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
      fail_write(s.path, err);  // the destructor removes this one and the rest
    }
  }
  std::vector<std::filesystem::path> synced;
  for (const auto& s : staged_)
    if (std::find(synced.begin(), synced.end(), s->dir) == synced.end()) {
      sync_directory(s->dir);
      synced.push_back(s->dir);
    }
  staged_.clear();
}

void write_file_atomically(const std::string& path, std::span<const std::byte> header,
                           std::span<const std::byte> body, FileBatch* batch) {
  write_file_atomically_from(
      path, header, [&](const auto& put) { put(body); }, batch);
}

std::filesystem::path write_target(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  std::error_code ec;
  for (int hop = 0; hop < 40 && std::filesystem::is_symlink(target, ec); ++hop) {
    const auto next = std::filesystem::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

void write_file_atomically_from(const std::string& path, std::span<const std::byte> header,
                                const BodyPieces& body, FileBatch* batch) {
  if (path.empty()) fail_write(path, ENOENT);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail_write(path, EISDIR);
    if (!S_ISREG(st.st_mode)) return write_in_place(path, header, body);
    // The file stdout or stderr is (/dev/stdout with stdout redirected to a file): written
    // through that descriptor, after what the shell sent there and with its O_APPEND, where a
    // rename would replace the user's file.
    for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
      struct stat std_st {};
      if (::fstat(fd, &std_st) != 0 || std_st.st_dev != st.st_dev || std_st.st_ino != st.st_ino)
        continue;
      if (!write_all(fd, header, body)) fail_write(path, errno);
      return;
    }
  }
  // A symlink stays: the file it names, even one yet to be made, is replaced.
  const std::filesystem::path target = write_target(path);
  std::error_code ec;
  if (std::filesystem::is_symlink(target, ec)) fail_write(path, ELOOP);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") fail_write(path, EISDIR);
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");

  auto staged = std::make_unique<FileBatch::Staged>();
  staged->path = path;
  staged->target = target;
  staged->dir = dir;
  std::string& tmp = staged->tmp;
  const int fd = create_temp(dir, name, tmp, staged->registered);
  if (fd < 0) fail_write(path, errno);

  int err = 0;
  try {
    if (!write_all(fd, header, body)) err = errno;
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && batch) {
    batch->staged_.push_back(std::move(staged));  // renamed by publish()
    return;
  }
  if (!err && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    fail_write(path, err);
  }
  sync_directory(dir);
}

void remove_temporary_files() noexcept {
  // A file already renamed is gone under this name: unlink then fails harmlessly.
  for (auto& s : in_progress)
    if (const char* path = s.load(); path && *path) ::unlink(path);
}

}  // namespace irrun
