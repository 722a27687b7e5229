// Whole-file input and crash-safe output for blobs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "irrun/tensor.hpp"

namespace irrun {

// Maps a whole regular file read-only. Throws irrun::input_error: "<path>: cannot open: <reason>",
// "<path>: is a directory", "<path>: not a regular file".
Buffer read_file(const std::string& path);

// Reads a regular file front to back in chunks of at most 1 MiB, passing each to `chunk`. For
// whole-file digests: unlike a mapping, the file's pages never count towards the process's RSS.
// Throws as read_file, and "<path>: cannot read: <reason>".
void read_file_chunks(const std::string& path,
                      const std::function<void(std::span<const std::byte>)>& chunk);

// Creates `dir` and its missing parents, as `mkdir -p` (an output directory, a report's
// directory). Throws irrun::output_error: "<dir>: <what> is not a directory" when something else
// has its name, "<dir>: cannot create <what>: <reason>".
void make_directories(const std::filesystem::path& dir, const std::string& what);

class FileBatch;

// The file a write to `path` replaces: `path` with its symlinks followed, to a file yet to be
// made too (a loop stops after 40 hops, as the kernel's does).
std::filesystem::path write_target(const std::filesystem::path& path);

// Writes header then body to a temporary file next to `path`, fsyncs it and renames it over
// `path`, so readers see either the old file or the complete new one. On failure the temporary
// file is removed and irrun::output_error("<path>: cannot write: <reason>") is thrown. A symlink
// is followed (the file it names is replaced, the link kept); a device or FIFO such as /dev/null
// or /dev/stdout is written in place, and a FIFO without a reader is an error, not a wait.
// With a `batch`, the rename waits for the batch's publish() (below).
void write_file_atomically(const std::string& path, std::span<const std::byte> header,
                           std::span<const std::byte> body = {}, FileBatch* batch = nullptr);

// The same with a body written in pieces: body(put) calls put on each piece in order (a body
// converted on the way out, with no copy of it whole); put returns false once a write has
// failed, and the body may stop there. An exception from body removes the temporary file and
// propagates.
using BodyPieces = std::function<void(const std::function<bool(std::span<const std::byte>)>& put)>;
void write_file_atomically_from(const std::string& path, std::span<const std::byte> header,
                                const BodyPieces& body, FileBatch* batch = nullptr);

// Files written as one result (a golden directory): each write into the batch leaves its
// complete, fsynced temporary file beside its target, and publish() renames them all into place,
// so a run that fails before (a full disk on its third file, an exception, a signal through
// remove_temporary_files) leaves none of them. A batch destroyed unpublished removes its
// temporary files. Writes in place (devices, FIFOs, stdout's own file) are not held back.
class FileBatch {
 public:
  FileBatch();
  ~FileBatch();
  FileBatch(const FileBatch&) = delete;
  FileBatch& operator=(const FileBatch&) = delete;

  // Renames the files into place in the order written. Throws irrun::output_error
  // ("<path>: cannot write: <reason>") if a rename fails; the files not yet renamed are removed.
  void publish();

  struct Staged;  // file_io.cpp

 private:
  friend void write_file_atomically_from(const std::string&, std::span<const std::byte>,
                                         const BodyPieces&, FileBatch*);
  std::vector<std::unique_ptr<Staged>> staged_;
};

// Removes the temporary files of the writes in progress, for a handler of a signal that ends
// the process (an interrupted write leaves nothing behind). Async-signal-safe: unlink() only.
void remove_temporary_files() noexcept;

}  // namespace irrun
