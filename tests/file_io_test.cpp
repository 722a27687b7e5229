#include "irrun/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "irrun/error.hpp"
#include "support/error_of.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

using TempDir = irrun::testing::ScratchDir;

using irrun::testing::read_text;

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s));
}

using irrun::testing::error_of;

}  // namespace

TEST_CASE("write_file_atomically writes header and body, replacing a file", "[file_io]") {
  TempDir dir("file-io");
  const auto path = dir.file("out.bin");
  const std::string header = "HEAD", body = "body bytes";
  irrun::write_file_atomically(path, bytes(header), bytes(body));
  CHECK(read_text(path) == "HEADbody bytes");

  irrun::write_file_atomically(path, bytes(std::string("new")));
  CHECK(read_text(path) == "new");
  irrun::write_file_atomically(path, {}, {});
  CHECK(read_text(path) == "");
  CHECK(dir.entries() == 1);  // no temporary files left behind

  // Permissions come from the umask like any new file, not mkstemp's 0600.
  const mode_t old = ::umask(022);
  irrun::write_file_atomically(dir.file("perm.bin"), bytes(header));
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat(dir.file("perm.bin").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("a FileBatch renames its files together, or leaves none of them", "[file_io]") {
  TempDir dir("file-batch");
  const auto a = dir.file("a.bin"), b = dir.file("b.bin");
  irrun::write_file_atomically(a, bytes(std::string("old a")));
  {
    irrun::FileBatch batch;
    irrun::write_file_atomically(a, bytes(std::string("new a")), {}, &batch);
    irrun::write_file_atomically(b, bytes(std::string("new b")), {}, &batch);
    CHECK(read_text(a) == "old a");  // not yet: complete temporary files beside them
    CHECK(!fs::exists(b));
    CHECK(dir.entries() == 3);
    batch.publish();
    CHECK(read_text(a) == "new a");
    CHECK(read_text(b) == "new b");
    CHECK(dir.entries() == 2);
  }
  {  // unpublished (a later write failed): the old files stay, the temporary ones go
    irrun::FileBatch batch;
    irrun::write_file_atomically(a, bytes(std::string("newer a")), {}, &batch);
    fs::create_directory(dir.file("c.bin"));
    error_of([&] { irrun::write_file_atomically(dir.file("c.bin"), {}, {}, &batch); },
             irrun::ExitCode::output_failed);
  }
  CHECK(read_text(a) == "new a");
  CHECK(dir.entries() == 3);  // a, b and the directory c.bin
}

// A signal's cleanup (remove_temporary_files) finds every file a batch holds back: a golden of
// 80 outputs left 16 temporary files on SIGTERM when 64 slots were all there was (a review).
TEST_CASE("a signal's cleanup removes every temporary file of a large FileBatch", "[file_io]") {
  TempDir dir("file-batch-signal");
  irrun::FileBatch batch;
  for (int i = 0; i < 300; ++i) {
    std::string name = std::to_string(i);  // appended: GCC 12 warns on "o" + std::string&&
    name += ".bin";
    irrun::write_file_atomically(dir.file(name), bytes(std::string("x")), {}, &batch);
  }
  CHECK(dir.entries() == 300);
  irrun::remove_temporary_files();
  CHECK(dir.entries() == 0);
}

TEST_CASE("write_file_atomically_from writes a body's pieces; a throw leaves the old file",
          "[file_io]") {
  TempDir dir("file-io");
  const auto path = dir.file("out.bin");
  const std::string header = "HEAD";
  irrun::write_file_atomically_from(path, bytes(header), [](const auto& put) {
    for (const std::string piece : {"one ", "", "two"}) put(bytes(piece));
  });
  CHECK(read_text(path) == "HEADone two");
  struct Stop {};
  CHECK_THROWS_AS(irrun::write_file_atomically_from(path, bytes(header),
                                                    [](const auto& put) {
                                                      put(bytes(std::string("half")));
                                                      throw Stop{};
                                                    }),
                  Stop);
  CHECK(read_text(path) == "HEADone two");
  CHECK(dir.entries() == 1);  // the temporary file removed
  // In place (a device): the pieces go straight there.
  irrun::write_file_atomically_from("/dev/null", bytes(header),
                                    [](const auto& put) { CHECK(put(bytes(std::string("x")))); });
  // After a failed write put says so, and the error is the write's.
  int after_failure = 0;
  const auto full = error_of(
      [&] {
        irrun::write_file_atomically_from("/dev/full", {}, [&](const auto& put) {
          for (int k = 0; k < 3; ++k) after_failure += !put(bytes(std::string("x")));
        });
      },
      irrun::ExitCode::output_failed);
  CHECK(full.find("/dev/full: cannot write") != std::string::npos);
  CHECK(after_failure == 3);
}

TEST_CASE("write_file_atomically keeps symlinks, devices and FIFOs", "[file_io]") {
  TempDir dir("file-io");
  const std::string data = "data";

  SECTION("a symlink stays, the file it names is replaced") {
    fs::create_directory(dir.file("real"));
    std::ofstream(dir.file("real/out.bin")) << "old";
    fs::create_symlink("real/out.bin", dir.file("link.bin"));
    irrun::write_file_atomically(dir.file("link.bin"), bytes(data));
    CHECK(fs::is_symlink(dir.file("link.bin")));
    CHECK(read_text(dir.file("real/out.bin")) == "data");
    CHECK(dir.entries() == 2);
    CHECK(std::distance(fs::directory_iterator(dir.file("real")), fs::directory_iterator()) == 1);
  }
  SECTION("a symlink to a file yet to be made stays") {
    fs::create_directory(dir.file("real"));
    fs::create_symlink("real/out.bin", dir.file("link.bin"));
    irrun::write_file_atomically(dir.file("link.bin"), bytes(data));
    CHECK(fs::is_symlink(dir.file("link.bin")));
    CHECK(read_text(dir.file("real/out.bin")) == "data");
  }
  SECTION("a symlink loop is an error, the links stay") {
    fs::create_symlink("b", dir.file("a"));
    fs::create_symlink("a", dir.file("b"));
    CHECK(error_of([&] { irrun::write_file_atomically(dir.file("a"), bytes(data)); },
                   irrun::ExitCode::output_failed) ==
          dir.file("a") + ": cannot write: Too many levels of symbolic links");
    CHECK(fs::is_symlink(dir.file("a")));
    CHECK(fs::is_symlink(dir.file("b")));
  }
  SECTION("/dev/null is written, not replaced") {
    irrun::write_file_atomically("/dev/null", bytes(data), bytes(data));
    struct stat st {};
    REQUIRE(::stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  SECTION("a FIFO with a reader receives the bytes") {
    const auto fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    irrun::write_file_atomically(fifo, bytes(std::string("HEAD")), bytes(data));
    char got[16] = {};
    CHECK(::read(reader, got, sizeof got) == 8);
    ::close(reader);
    CHECK(std::string(got) == "HEADdata");
    struct stat st {};
    REQUIRE(::lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(dir.entries() == 1);
  }
  SECTION("a FIFO without a reader fails at once") {
    const auto fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(error_of([&] { irrun::write_file_atomically(fifo, bytes(data)); },
                   irrun::ExitCode::output_failed) ==
          fifo + ": cannot write: No such device or address");
    CHECK(dir.entries() == 1);
  }
}

TEST_CASE("write_file_atomically failures leave nothing behind", "[file_io]") {
  TempDir dir("file-io");
  const std::string data = "data";

  SECTION("missing directory") {
    const auto path = dir.file("missing/out.bin");
    CHECK(error_of([&] { irrun::write_file_atomically(path, bytes(data)); },
                   irrun::ExitCode::output_failed) ==
          path + ": cannot write: No such file or directory");
    CHECK(dir.entries() == 0);
  }
  SECTION("parent is a file") {
    std::ofstream(dir.file("plain")) << "x";
    const auto path = dir.file("plain/out.bin");
    CHECK(error_of([&] { irrun::write_file_atomically(path, bytes(data)); },
                   irrun::ExitCode::output_failed) == path + ": cannot write: Not a directory");
    CHECK(dir.entries() == 1);
  }
  SECTION("target is a directory") {
    fs::create_directory(dir.file("sub"));
    const auto path = dir.file("sub");
    CHECK(error_of([&] { irrun::write_file_atomically(path, bytes(data)); },
                   irrun::ExitCode::output_failed) == path + ": cannot write: Is a directory");
    CHECK(dir.entries() == 1);  // only "sub": the temporary file was removed
    CHECK(fs::is_empty(dir.path() / "sub"));
  }
  SECTION("trailing slash") {
    const auto path = dir.file("sub/");
    CHECK_THAT(error_of([&] { irrun::write_file_atomically(path, bytes(data)); },
                        irrun::ExitCode::output_failed),
               Catch::Contains("cannot write"));
    CHECK(dir.entries() == 0);
  }
  SECTION("directory not writable") {
    // root ignores directory permissions, so the check is meaningless there.
    if (::geteuid() != 0) {
      fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
      const auto path = dir.file("out.bin");
      CHECK(error_of([&] { irrun::write_file_atomically(path, bytes(data)); },
                     irrun::ExitCode::output_failed) == path + ": cannot write: Permission denied");
      fs::permissions(dir.path(), fs::perms::owner_all);
      CHECK(dir.entries() == 0);
    }
  }
}

TEST_CASE("read_file maps a file and reports clear errors", "[file_io]") {
  TempDir dir("file-io");
  std::ofstream(dir.file("a.bin"), std::ios::binary) << "abc";
  irrun::Buffer b = irrun::read_file(dir.file("a.bin"));
  REQUIRE(b.size() == 3);
  CHECK(std::string(reinterpret_cast<const char*>(b.data()), 3) == "abc");

  std::ofstream(dir.file("empty.bin"), std::ios::binary);
  CHECK(irrun::read_file(dir.file("empty.bin")).size() == 0);

  const auto missing = dir.file("missing.bin");
  CHECK(error_of([&] { irrun::read_file(missing); }, irrun::ExitCode::bad_input) ==
        missing + ": cannot open: No such file or directory");
  CHECK(error_of([&] { irrun::read_file(dir.path().string()); }, irrun::ExitCode::bad_input) ==
        dir.path().string() + ": is a directory");
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  CHECK(error_of([&] { irrun::read_file(dir.file("fifo")); }, irrun::ExitCode::bad_input) ==
        dir.file("fifo") + ": not a regular file");
  if (::geteuid() != 0) {
    fs::permissions(dir.file("a.bin"), fs::perms::none);
    CHECK(error_of([&] { irrun::read_file(dir.file("a.bin")); }, irrun::ExitCode::bad_input) ==
          dir.file("a.bin") + ": cannot open: Permission denied");
  }
}

TEST_CASE("read_file_chunks reads a file in order, in chunks of at most 1 MiB", "[file_io]") {
  TempDir dir("file-io");
  std::string data(2 * (1 << 20) + 12345, '\0');
  std::mt19937 rng(3);
  for (auto& c : data) c = static_cast<char>(rng());
  std::ofstream(dir.file("big.bin"), std::ios::binary) << data;
  std::string got;
  std::size_t chunks = 0, largest = 0;
  irrun::read_file_chunks(dir.file("big.bin"), [&](std::span<const std::byte> c) {
    got.append(reinterpret_cast<const char*>(c.data()), c.size());
    ++chunks;
    largest = std::max(largest, c.size());
  });
  CHECK(got == data);
  CHECK(chunks >= 3);
  CHECK(largest <= std::size_t{1} << 20);

  std::ofstream(dir.file("empty.bin"), std::ios::binary);
  chunks = 0;
  irrun::read_file_chunks(dir.file("empty.bin"), [&](std::span<const std::byte>) { ++chunks; });
  CHECK(chunks == 0);

  // read_file's messages; a FIFO is refused at once, not waited on for a writer.
  const auto none = [](std::span<const std::byte>) {};
  const auto missing = dir.file("missing.bin");
  CHECK(error_of([&] { irrun::read_file_chunks(missing, none); }, irrun::ExitCode::bad_input) ==
        missing + ": cannot open: No such file or directory");
  CHECK(error_of([&] { irrun::read_file_chunks(dir.path().string(), none); },
                 irrun::ExitCode::bad_input) == dir.path().string() + ": is a directory");
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  CHECK(error_of([&] { irrun::read_file_chunks(dir.file("fifo"), none); },
                 irrun::ExitCode::bad_input) == dir.file("fifo") + ": not a regular file");
}

TEST_CASE("make_directories makes missing parents and names what is in the way", "[file_io]") {
  TempDir dir("file-io");
  irrun::make_directories(dir.file("a/b/c"), "the test's directory");
  CHECK(fs::is_directory(dir.file("a/b/c")));
  irrun::make_directories(dir.file("a/b/c"), "the test's directory");  // already there: fine
  std::ofstream(dir.file("f")) << "x";
  CHECK(error_of([&] { irrun::make_directories(dir.file("f"), "the test's directory"); },
                 irrun::ExitCode::output_failed) ==
        dir.file("f") + ": the test's directory is not a directory");
  CHECK(error_of([&] { irrun::make_directories(dir.file("f/sub"), "the test's directory"); },
                 irrun::ExitCode::output_failed)
            .starts_with(dir.file("f/sub") + ": cannot create the test's directory: "));
}
