// End-to-end tests of `irrun check` and the top-level options: they run the built binary on the
// hand-written models in samples/ and on small variants written to a scratch directory.
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"

namespace {

using irrun::testing::any_line_has_all;
using irrun::testing::count_lines_with;
using irrun::testing::read_text;
using irrun::testing::run_irrun;
using irrun::testing::sample;
using irrun::testing::ScratchDir;

const std::vector<std::string> kGoodSamples = {
    "avgpool_v11.xml",    "avgpool_chain_v10.xml", "adaptive_v11.xml",      "multi_op_v11.xml",
    "two_inputs_v11.xml", "maxpool_v11.xml",       "maxpool_chain_v10.xml", "adaptive_max_v11.xml",
};

// 1-based number of the first line of `path` that contains `needle` (0 if none).
std::size_t line_of(const std::string& path, const std::string& needle) {
  const auto lines = irrun::testing::RunResult::split_lines(read_text(path));
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return i + 1;
  return 0;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}

// The one line `irrun check` prints for samples/bad_dim_v11.xml: the AvgPool's output port
// declares the floor result 4x4, ceil rounding gives 5x5.
std::string bad_dim_line() {
  const auto path = sample("bad_dim_v11.xml");
  const auto line = line_of(path, "<port id=\"1\" precision=\"FP32\" names=\"pool\">");
  REQUIRE(line > 0);
  return path + ":" + std::to_string(line) +
         ": error: layer 1 'pool' (AvgPool-1 opset1) output port 1: declared [1,3,4,4], "
         "inferred [1,3,5,5] [dim-mismatch]";
}

}  // namespace

TEST_CASE("irrun --version prints the name and version", "[cli][check]") {
  const auto r = run_irrun({"--version"});
  CHECK(r.exit_code == 0);
  REQUIRE(r.out_lines().size() == 1);
  CHECK(r.out_lines()[0].rfind("irrun ", 0) == 0);
  CHECK(r.out_lines()[0].find_first_of("0123456789") != std::string::npos);
}

TEST_CASE("irrun --help lists the subcommands, examples and exit codes", "[cli][check]") {
  const auto r = run_irrun({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("check") != std::string::npos);
  CHECK(r.out.find("info") != std::string::npos);
  CHECK(r.out.find("Examples:") != std::string::npos);
  CHECK(r.out.find("irrun check model.xml") != std::string::npos);
  CHECK(r.out.find("Exit codes:") != std::string::npos);
  CHECK(r.out.find("1 check failed") != std::string::npos);
  CHECK(r.out.find("2 usage error") != std::string::npos);
  CHECK(r.out.find("3 bad model") != std::string::npos);
}

TEST_CASE("irrun check --help explains the output line and the exit codes", "[cli][check]") {
  const auto r = run_irrun({"check", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--strict") != std::string::npos);
  CHECK(r.out.find("Exit 0") != std::string::npos);
}

TEST_CASE("irrun check passes every good sample with no warning", "[cli][check]") {
  for (const auto& name : kGoodSamples) {
    INFO(name);
    const auto path = sample(name);
    const auto r = run_irrun({"check", path});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    const auto lines = r.out_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind(path + ": ok: ", 0) == 0);
    CHECK(lines[0].find(" 0 error(s), 0 warning(s)") != std::string::npos);
    CHECK(r.err.empty());
  }
}

TEST_CASE("irrun check counts the layers it checked", "[cli][check]") {
  // Parameter, AvgPool, Result.
  auto r = run_irrun({"check", sample("avgpool_v11.xml")});
  CHECK(r.out.find(": ok: 3 layer(s) checked, 0 error(s), 0 warning(s)") != std::string::npos);
  // Convolution, Add and Relu are not implemented: their declared dims are taken as given and the
  // five others (Parameter, 2 Const, AvgPool, Result) are checked.
  r = run_irrun({"check", sample("multi_op_v11.xml")});
  CHECK(r.out.find(": ok: 5 layer(s) checked, 0 error(s), 0 warning(s)") != std::string::npos);
  // Parameter, AvgPool, MaxPool-8 and the Results of its values and indices.
  r = run_irrun({"check", sample("maxpool_v11.xml")});
  CHECK(r.out.find(": ok: 5 layer(s) checked, 0 error(s), 0 warning(s)") != std::string::npos);
}

TEST_CASE("irrun check reports a wrong declared dim with file, line, layer and shapes",
          "[cli][check]") {
  const auto path = sample("bad_dim_v11.xml");
  const auto r = run_irrun({"check", path});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto lines = r.out_lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == bad_dim_line());
  CHECK(lines[1] == path + ": FAILED: 3 layer(s) checked, 1 error(s), 0 warning(s)");

  // The README shows these two lines as printed for `irrun check samples/bad_dim_v11.xml`.
  const auto readme = read_text(sample("../README.md"));
  const auto dir = sample("");
  for (const auto& l : lines) {
    const auto shown = replace_all(l, dir, "samples/");
    INFO("README.md should show: " << shown);
    CHECK(readme.find("\n" + shown + "\n") != std::string::npos);
  }
}

TEST_CASE("irrun check on several files prints every problem and fails if one fails",
          "[cli][check]") {
  const auto good = sample("avgpool_v11.xml");
  const auto bad = sample("bad_dim_v11.xml");
  const auto other = sample("avgpool_chain_v10.xml");
  const auto r = run_irrun({"check", good, bad, other});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto lines = r.out_lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind(good + ": ok: ", 0) == 0);
  CHECK(lines[1] == bad_dim_line());
  CHECK(lines[2].rfind(bad + ": FAILED: ", 0) == 0);
  CHECK(lines[3].rfind(other + ": ok: ", 0) == 0);

  // The same bad file twice: both copies are reported.
  const auto twice = run_irrun({"check", bad, bad});
  CHECK(twice.exit_code == 1);
  CHECK(count_lines_with(twice.out_lines(), bad_dim_line()) == 2);

  // All good: exit 0.
  std::vector<std::string> args{"check"};
  for (const auto& name : kGoodSamples) args.push_back(sample(name));
  const auto all_good = run_irrun(args);
  CHECK(all_good.exit_code == 0);
  CHECK(count_lines_with(all_good.out_lines(), ": ok: ") == kGoodSamples.size());
}

TEST_CASE("irrun check on a missing file prints one clear line and fails", "[cli][check]") {
  ScratchDir dir;
  const auto missing = dir.file("no_such_model.xml");
  const auto r = run_irrun({"-q", "check", missing});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto lines = r.out_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(missing + ": error: ", 0) == 0);
  CHECK(lines[0].find("No such file") != std::string::npos);

  // Among other files, the others are still checked.
  const auto mixed = run_irrun({"check", missing, sample("avgpool_v11.xml")});
  CHECK(mixed.exit_code == 1);
  CHECK(any_line_has_all(mixed.out_lines(), {missing, "FAILED"}));
  CHECK(any_line_has_all(mixed.out_lines(), {sample("avgpool_v11.xml"), ": ok: "}));
}

TEST_CASE("irrun reports usage errors with exit code 2", "[cli][check]") {
  SECTION("no arguments") {
    const auto r = run_irrun(std::vector<std::string>{});
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.err.empty());
  }
  SECTION("unknown top-level option") {
    const auto r = run_irrun({"--no-such-option", "check", sample("avgpool_v11.xml")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--no-such-option") != std::string::npos);
  }
  SECTION("unknown check option") {
    const auto r = run_irrun({"check", "--no-such-option", sample("avgpool_v11.xml")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--no-such-option") != std::string::npos);
    CHECK(r.out.empty());
  }
  SECTION("check without files") {
    const auto r = run_irrun({"check"});
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.err.empty());
    CHECK(r.out.empty());
  }
  SECTION("--weights with two models") {
    const auto r = run_irrun({"check", "--weights", sample("adaptive_v11.bin"),
                              sample("adaptive_v11.xml"), sample("avgpool_v11.xml")});
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("a name holding a newline cannot split a diagnostic or a summary line", "[cli][check]") {
  ScratchDir dir;
  auto xml = irrun::testing::read_text(sample("bad_dim_v11.xml"));
  const std::string from = "name=\"pool\"";
  REQUIRE(xml.find(from) != std::string::npos);
  xml.replace(xml.find(from), from.size(), "name=\"ab&#10;cd\"");
  const auto model = dir.write("newline.xml", xml);
  const auto r = run_irrun({"check", model});
  CHECK(r.exit_code == 1);
  REQUIRE(r.out_lines().size() == 2);
  CHECK(r.out_lines()[0].find("layer 1 'ab\\ncd' (AvgPool-1 opset1) output port 1: declared") !=
        std::string::npos);
  const auto info = run_irrun({"info", model});
  CHECK(count_lines_with(info.out_lines(), "ab\\ncd") == 2);  // its row and its error

  // The net's name in info's first line, and an opaque layer's type in its table.
  auto net = xml;
  net.replace(net.find("<net name=\""), 11, "<net name=\"x&#10;y");
  net.replace(net.find("type=\"Result\""), 13, "type=\"Re&#10;sult\"");
  const auto other = run_irrun({"info", dir.write("net.xml", net)});
  for (const auto& line : other.out_lines()) {
    INFO(line);
    CHECK((line.rfind("id ", 0) == 0 || line.find(dir.file("net.xml")) == 0 ||
           std::isdigit(static_cast<unsigned char>(line[0]))));
  }
  CHECK(count_lines_with(other.out_lines(), "'x\\nybad_dim_sample'") == 1);
  CHECK(count_lines_with(other.out_lines(), "Re\\nsult") == 2);  // its row and its warning
}

TEST_CASE("a path holding a newline or an escape cannot split or colour a summary line",
          "[cli][check]") {
  ScratchDir dir;
  const auto xml = irrun::testing::read_text(sample("bad_dim_v11.xml"));
  const auto model = dir.write("a\nb\x1b[31m.xml", xml);
  const auto shown = dir.file("a\\nb\\x1b[31m.xml");
  const auto r = run_irrun({"check", model});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  REQUIRE(r.out_lines().size() == 2);
  CHECK(r.out_lines()[0].rfind(shown + ":29: error: ", 0) == 0);
  CHECK(r.out_lines()[1] == shown + ": FAILED: 3 layer(s) checked, 1 error(s), 0 warning(s)");
  CHECK(r.out.find('\x1b') == std::string::npos);

  const auto info = run_irrun({"info", model});
  INFO(info.out << info.err);
  REQUIRE(!info.out_lines().empty());
  CHECK(info.out_lines()[0].rfind(shown + ": IR v11 ", 0) == 0);
  CHECK(info.out.find('\x1b') == std::string::npos);

  // run's warning that the declared dims differ, on stderr.
  const auto run = run_irrun({model, "--random-input"});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(any_line_has_all(run.err_lines(), {"irrun: warning: " + shown + ": 1 declared shape"}));
  CHECK(run.err.find('\x1b') == std::string::npos);
}

TEST_CASE("global short flags combine before a subcommand or a model", "[cli][check]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-qv", "check", sample("avgpool_v11.xml")},
        {"-vq", sample("avgpool_v11.xml"), "--random-input"}}) {
    const auto r = run_irrun(args);
    INFO(args[0] << " " << args[1] << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());                                      // -q: no summary
    CHECK(r.err.find("irrun: debug: ") != std::string::npos);  // -v: the details
  }
}

TEST_CASE("irrun check --strict turns what OpenVINO silently ignores into errors", "[cli][check]") {
  // `exclude_pad` (underscore) is not an AvgPool attribute: OpenVINO ignores it and keeps the
  // default exclude-pad=true.
  ScratchDir dir;
  const auto original = read_text(sample("avgpool_v11.xml"));
  const auto text = replace_all(original, "exclude-pad=\"true\"", "exclude_pad=\"true\"");
  REQUIRE(text != original);
  const auto path = dir.write("typo.xml", text);
  // The warning points at the <data> element holding the attribute (the line after <layer>).
  const auto line = line_of(path, "<layer id=\"1\" name=\"pool\"") + 1;
  const auto where = path + ":" + std::to_string(line) + ": ";

  const auto lenient = run_irrun({"check", path});
  INFO("expected prefix: " << where);
  INFO(lenient.out << lenient.err);
  CHECK(lenient.exit_code == 0);
  CHECK(any_line_has_all(lenient.out_lines(), {where + "warning: ", "layer 1 'pool'", "AvgPool-1",
                                               "exclude_pad", "[unknown-attribute]"}));
  CHECK(any_line_has_all(lenient.out_lines(), {path + ": ok: ", "0 error(s), 1 warning(s)"}));

  const auto strict = run_irrun({"check", "--strict", path});
  INFO(strict.out << strict.err);
  CHECK(strict.exit_code == 1);
  CHECK(any_line_has_all(strict.out_lines(), {where + "error: ", "layer 1 'pool'", "AvgPool-1",
                                              "exclude_pad", "[unknown-attribute]"}));
  CHECK(any_line_has_all(strict.out_lines(), {path + ": FAILED: ", "1 error(s), 0 warning(s)"}));

  // The samples stay clean under --strict.
  for (const auto& name : kGoodSamples) {
    INFO(name);
    CHECK(run_irrun({"check", "--strict", sample(name)}).exit_code == 0);
  }
}

TEST_CASE("irrun -q check prints only the problems", "[cli][check]") {
  const auto good = sample("avgpool_v11.xml");
  const auto bad = sample("bad_dim_v11.xml");

  auto r = run_irrun({"-q", "check", good});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());

  r = run_irrun({"-q", "check", good, bad});
  CHECK(r.exit_code == 1);
  const auto lines = r.out_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == bad_dim_line());

  // --quiet is accepted after the subcommand too.
  r = run_irrun({"check", "--quiet", bad});
  CHECK(r.exit_code == 1);
  REQUIRE(r.out_lines().size() == 1);
  CHECK(r.out_lines()[0] == bad_dim_line());
}
