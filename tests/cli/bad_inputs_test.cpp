// The catalogue of bad inputs (tests/bad_inputs/cases.txt, written by make_cases.py): every
// malformed model, blob, file and output directory runs through the built irrun binary, which
// must exit with the listed code, print the listed message, never crash or hang, and leave no
// file in the output directory.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"

#ifndef IRRUN_TESTS_DIR
#error "tests/CMakeLists.txt defines IRRUN_TESTS_DIR as the tests source directory"
#endif

namespace {

namespace fs = std::filesystem;
using irrun::testing::ScratchDir;

const fs::path kDir = fs::path(IRRUN_TESTS_DIR) / "bad_inputs";
constexpr unsigned kTimeoutSeconds = 60;  // a hang fails the case instead of the whole suite

struct Case {
  std::string name;
  int exit_code = 0;
  std::string substring;
  std::string args;
  std::size_t line = 0;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<Case> load_cases() {
  std::ifstream in(kDir / "cases.txt");
  REQUIRE(in);
  std::vector<Case> cases;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    for (std::size_t pos = 0;;) {
      const auto bar = line.find(" | ", pos);
      if (bar == std::string::npos || fields.size() == 3) {
        fields.push_back(trim(line.substr(pos)));
        break;
      }
      fields.push_back(trim(line.substr(pos, bar - pos)));
      pos = bar + 3;
    }
    INFO("cases.txt:" << n << ": " << line);
    REQUIRE(fields.size() == 4);
    cases.push_back({fields[0], std::stoi(fields[1]), fields[2], fields[3], n});
  }
  return cases;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

// good.xml with a 1,000,000-deep element nesting in the net's <rt_info>.
std::string deep_model(const ScratchDir& dir) {
  std::string xml = irrun::testing::read_text((kDir / "good.xml").string());
  constexpr std::size_t kDepth = 1000000;
  std::string nest = "<rt_info>";
  nest.reserve(kDepth * 7 + 32);
  for (std::size_t i = 0; i < kDepth; ++i) nest += "<a>";
  for (std::size_t i = 0; i < kDepth; ++i) nest += "</a>";
  nest += "</rt_info>\n</net>";
  replace_all(xml, "</net>", nest);
  return dir.write("deep.xml", xml);
}

std::vector<fs::path> listing(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename());
  return files;
}

}  // namespace

TEST_CASE("bad inputs catalogue: exact exit code, message, no output", "[cli][bad-inputs]") {
  const auto cases = load_cases();
  CHECK(cases.size() >= 50);
  const bool root = ::geteuid() == 0;
  std::size_t run = 0;
  for (const auto& c : cases) {
    if (root && (c.args.find("{unreadable}") != std::string::npos ||
                 c.args.find("{rodir}") != std::string::npos))
      continue;  // root ignores file permissions
    ScratchDir scratch("bad");
    const auto out_dir = scratch.path() / "out";
    std::string args = c.args;
    replace_all(args, "{dir}", kDir.string());
    replace_all(args, "{out}", out_dir.string());
    replace_all(args, "{tmp}", scratch.path().string());
    if (args.find("{fifo}") != std::string::npos) {
      const auto fifo = scratch.file("fifo");
      REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
      replace_all(args, "{fifo}", fifo);
    }
    if (args.find("{unreadable}") != std::string::npos) {
      const auto p = scratch.file("unreadable.npy");
      fs::copy_file(kDir / "good.npy", p);
      fs::permissions(p, fs::perms::none);
      replace_all(args, "{unreadable}", p);
    }
    if (args.find("{deep}") != std::string::npos) replace_all(args, "{deep}", deep_model(scratch));
    const auto outfile = scratch.path() / "outfile";
    if (args.find("{outfile}") != std::string::npos) {
      scratch.write("outfile", "not a directory\n");
      replace_all(args, "{outfile}", outfile.string());
    }
    const auto rodir = scratch.path() / "rodir";
    if (args.find("{rodir}") != std::string::npos) {
      fs::create_directory(rodir);
      fs::permissions(rodir, fs::perms::owner_read | fs::perms::owner_exec);
      replace_all(args, "{rodir}", rodir.string());
    }
    std::vector<std::string> argv;
    std::istringstream words(args);
    for (std::string w; words >> w;) argv.push_back(w);

    const auto r = irrun::testing::run_irrun(argv, kTimeoutSeconds);
    ++run;
    INFO("cases.txt:" << c.line << ": " << c.name << "\n  irrun " << args << "\n  exit "
                      << r.exit_code << "\n  stdout: " << r.out << "\n  stderr: " << r.err);
    CHECK(r.exit_code == c.exit_code);
    CHECK((r.out + r.err).find(c.substring) != std::string::npos);
    // Errors other than usage errors are one line on stderr.
    if (c.exit_code >= 3) CHECK(irrun::testing::RunResult::split_lines(r.err).size() == 1);
    // Nothing written: not in --output-dir, and no temporary file anywhere in the scratch dir.
    CHECK(listing(out_dir).empty());
    CHECK(listing(rodir).empty());
    CHECK(irrun::testing::read_text(outfile.string()) ==
          (fs::exists(outfile) ? "not a directory\n" : ""));
    for (const auto& f : listing(scratch.path()))
      CHECK(f.string().find(".tmp.") == std::string::npos);
    if (fs::exists(rodir)) fs::permissions(rodir, fs::perms::owner_all);
  }
  CHECK(run > 0);
}

TEST_CASE("bad inputs catalogue is up to date with make_cases.py", "[cli][bad-inputs]") {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
    WARN("python3 is not installed: not checked");
    return;
  }
  const std::string cmd = "python3 " + (kDir / "make_cases.py").string() + " --check >/dev/null";
  CHECK(std::system(cmd.c_str()) == 0);
}
