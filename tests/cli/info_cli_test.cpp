// End-to-end tests of `irrun info`: the layer table printed for the samples in samples/.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"

namespace {

using irrun::testing::read_text;
using irrun::testing::run_irrun;
using irrun::testing::sample;
using irrun::testing::ScratchDir;

const std::vector<std::string> kColumns = {"id",     "name",    "type", "attributes",
                                           "inputs", "outputs", "run"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The table `irrun info` prints: the header row's words give the column starts (columns are
// left-aligned and padded), every following row until the first diagnostic is a layer.
struct Table {
  std::vector<std::map<std::string, std::string>> rows;

  static Table parse(const std::vector<std::string>& lines) {
    Table t;
    std::size_t h = 0;
    while (h < lines.size() && lines[h].rfind("id  ", 0) != 0) ++h;
    REQUIRE(h < lines.size());
    const auto& header = lines[h];
    std::vector<std::size_t> start;
    for (const auto& c : kColumns) {
      const auto pos = header.find(c, start.empty() ? 0 : start.back());
      REQUIRE(pos != std::string::npos);
      start.push_back(pos);
    }
    for (std::size_t i = h + 1; i < lines.size(); ++i) {
      const auto& line = lines[i];
      if (line.empty() || line.find(": warning: ") != std::string::npos ||
          line.find(": error: ") != std::string::npos)
        break;
      std::map<std::string, std::string> row;
      for (std::size_t c = 0; c < kColumns.size(); ++c) {
        const auto b = start[c];
        const auto e = c + 1 < start.size() ? start[c + 1] : std::string::npos;
        row[kColumns[c]] =
            b < line.size()
                ? trim(line.substr(b, e == std::string::npos ? std::string::npos : e - b))
                : "";
      }
      t.rows.push_back(row);
    }
    return t;
  }

  std::optional<std::map<std::string, std::string>> row(const std::string& name) const {
    for (const auto& r : rows)
      if (r.at("name") == name) return r;
    return std::nullopt;
  }
};

// bad_dim_v11 fails `irrun check`: info prints its table, then the error, and exits 3.
int info_exit_code(const std::string& sample_name) {
  return sample_name == "bad_dim_v11.xml" ? 3 : 0;
}

Table info_table(const std::string& sample_name) {
  const auto r = run_irrun({"info", sample(sample_name)});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == info_exit_code(sample_name));
  return Table::parse(r.out_lines());
}

}  // namespace

TEST_CASE("irrun info prints a summary line and a layer table for every sample", "[cli][info]") {
  const std::vector<std::pair<std::string, std::size_t>> samples = {
      {"avgpool_v11.xml", 3},  {"avgpool_chain_v10.xml", 6}, {"adaptive_v11.xml", 4},
      {"multi_op_v11.xml", 8}, {"two_inputs_v11.xml", 6},    {"bad_dim_v11.xml", 3},
      {"maxpool_v11.xml", 5},  {"maxpool_chain_v10.xml", 7}, {"adaptive_max_v11.xml", 7},
  };
  for (const auto& [name, layers] : samples) {
    INFO(name);
    const auto r = run_irrun({"info", sample(name)});
    INFO(r.out << r.err);
    CHECK(r.exit_code == info_exit_code(name));
    const auto lines = r.out_lines();
    REQUIRE(lines.size() >= 2);
    CHECK(lines[0].rfind(sample(name) + ": IR v", 0) == 0);
    CHECK(lines[0].find(std::to_string(layers) + " layers") != std::string::npos);
    const auto t = Table::parse(lines);
    CHECK(t.rows.size() == layers);
  }
}

TEST_CASE("irrun info shows types, attributes, shapes and the run column", "[cli][info]") {
  SECTION("avgpool_v11: AvgPool-1 with ceil rounding") {
    const auto t = info_table("avgpool_v11.xml");
    const auto pool = t.row("pool");
    REQUIRE(pool);
    CHECK(pool->at("id") == "1");
    CHECK(pool->at("type") == "AvgPool-1");
    CHECK(pool->at("attributes").find("k=3x3") != std::string::npos);
    CHECK(pool->at("attributes").find("s=2x2") != std::string::npos);
    CHECK(pool->at("attributes").find("exclude-pad") != std::string::npos);
    CHECK(pool->at("attributes").find("ceil") != std::string::npos);
    CHECK(pool->at("inputs") == "[1,3,8,8]");
    CHECK(pool->at("outputs") == "[1,3,5,5]");
    CHECK(pool->at("run") == "yes");
    const auto input = t.row("input");
    REQUIRE(input);
    CHECK(input->at("type") == "Parameter-1");
    CHECK(input->at("attributes") == "f32 [1,3,8,8]");
    const auto result = t.row("pool/sink_port_0");
    REQUIRE(result);
    CHECK(result->at("type") == "Result-1");
    CHECK(result->at("inputs") == "[1,3,5,5]");
  }
  SECTION("avgpool_chain_v10: AvgPool-1, AvgPool-14 and AvgPool-16") {
    const auto t = info_table("avgpool_chain_v10.xml");
    const auto same = t.row("pool_same");
    const auto torch = t.row("pool_ceil_torch");
    const auto dilated = t.row("pool_dilated");
    REQUIRE(same);
    REQUIRE(torch);
    REQUIRE(dilated);
    CHECK(same->at("type") == "AvgPool-1");
    CHECK(same->at("attributes").find("same_upper") != std::string::npos);
    CHECK(same->at("outputs") == "[1,4,9,10]");
    CHECK(torch->at("type") == "AvgPool-14");
    CHECK(torch->at("attributes").find("ceil_torch") != std::string::npos);
    CHECK(torch->at("outputs") == "[1,4,5,6]");
    CHECK(dilated->at("type") == "AvgPool-16");
    CHECK(dilated->at("attributes").find("d=2x2") != std::string::npos);
    CHECK(dilated->at("attributes").find("include-pad") != std::string::npos);
    CHECK(dilated->at("outputs") == "[1,4,5,5]");
    for (const auto& r : t.rows) CHECK(r.at("run") == "yes");
  }
  SECTION("adaptive_v11: AdaptiveAvgPool-8 and its Const output_size from the .bin") {
    const auto r = run_irrun({"info", sample("adaptive_v11.xml")});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out_lines()[0].find("adaptive_v11.bin (16 bytes)") != std::string::npos);
    const auto t = Table::parse(r.out_lines());
    const auto pool = t.row("adaptive_pool");
    REQUIRE(pool);
    CHECK(pool->at("type") == "AdaptiveAvgPool-8");
    CHECK(pool->at("inputs") == "[1,2,7,9] [2]");
    CHECK(pool->at("outputs") == "[1,2,3,4]");
    CHECK(pool->at("run") == "yes");
    const auto size = t.row("output_size");
    REQUIRE(size);
    CHECK(size->at("type") == "Constant-1");
    CHECK(size->at("attributes") == "i64 [2]");
  }
  SECTION("multi_op_v11: ops irrun does not implement are listed but do not run") {
    const auto t = info_table("multi_op_v11.xml");
    for (const auto* name : {"conv", "conv/add_bias", "relu"}) {
      INFO(name);
      const auto row = t.row(name);
      REQUIRE(row);
      CHECK(row->at("run") == "no");
    }
    CHECK(t.row("conv")->at("type").find("Convolution") != std::string::npos);
    CHECK(t.row("conv")->at("outputs") == "[1,8,16,16]");
    const auto pool = t.row("pool");
    REQUIRE(pool);
    CHECK(pool->at("type") == "AvgPool-1");
    CHECK(pool->at("inputs") == "[1,8,16,16]");
    CHECK(pool->at("outputs") == "[1,8,8,8]");
    // The model as a whole cannot run (Convolution), but the pool runs alone with --layer.
    CHECK(pool->at("run") == "--layer");
  }
  SECTION("two_inputs_v11: an f32 and an f16 input") {
    const auto r = run_irrun({"info", sample("two_inputs_v11.xml")});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out_lines()[0].find("2 input(s), 2 output(s)") != std::string::npos);
    const auto t = Table::parse(r.out_lines());
    REQUIRE(t.row("image"));
    REQUIRE(t.row("mask"));
    CHECK(t.row("image")->at("attributes") == "f32 [1,3,12,12]");
    CHECK(t.row("mask")->at("attributes") == "f16 [1,1,10,10]");
    REQUIRE(t.row("mask_pool"));
    CHECK(t.row("mask_pool")->at("type") == "AvgPool-14");
    CHECK(t.row("mask_pool")->at("outputs") == "[1,1,4,4]");
    CHECK(t.row("mask_pool")->at("run") == "yes");
  }
  SECTION("maxpool_v11: MaxPool-8 with two outputs after an AvgPool") {
    const auto t = info_table("maxpool_v11.xml");
    const auto max = t.row("max");
    REQUIRE(max);
    CHECK(max->at("type") == "MaxPool-8");
    CHECK(max->at("attributes") == "k=3x3 s=2x2 pads=1,1/1,1 d=1x1 ceil axis=0 indices=i64");
    CHECK(max->at("inputs") == "[1,2,7,7]");
    CHECK(max->at("outputs") == "[1,2,4,4] [1,2,4,4]");
    CHECK(max->at("run") == "yes");
    REQUIRE(t.row("smooth"));
    CHECK(t.row("smooth")->at("type") == "AvgPool-1");
  }
  SECTION("maxpool_chain_v10: MaxPool-1, MaxPool-14 with ceil_torch, AvgPool") {
    const auto t = info_table("maxpool_chain_v10.xml");
    REQUIRE(t.row("max1"));
    CHECK(t.row("max1")->at("type") == "MaxPool-1");
    CHECK(t.row("max1")->at("attributes") == "k=2x2 s=2x2 pads=0,0/0,0 floor");
    REQUIRE(t.row("max14"));
    CHECK(t.row("max14")->at("type") == "MaxPool-14");
    CHECK(t.row("max14")->at("attributes").find("ceil_torch axis=2 indices=i32") !=
          std::string::npos);
    CHECK(t.row("max14")->at("outputs") == "[1,3,3,3] [1,3,3,3]");
  }
  SECTION("adaptive_max_v11: AdaptiveMaxPool-8 beside AdaptiveAvgPool-8") {
    const auto t = info_table("adaptive_max_v11.xml");
    REQUIRE(t.row("adaptive_max"));
    CHECK(t.row("adaptive_max")->at("type") == "AdaptiveMaxPool-8");
    CHECK(t.row("adaptive_max")->at("attributes") == "indices=i32");
    CHECK(t.row("adaptive_max")->at("outputs") == "[1,2,3,4] [1,2,3,4]");
    CHECK(t.row("adaptive_max")->at("run") == "yes");
  }
  SECTION("an AdaptiveAvgPool-8 whose output_size a Parameter feeds does not run") {
    // run refuses it (exit 6: its output shape is not static), so neither does the model.
    ScratchDir dir;
    const auto model = dir.write("param_size.xml", R"(<?xml version="1.0"?>
<net name="t" version="11"><layers>
<layer id="0" name="input" type="Parameter" version="opset1"><data shape="1,2,7,9" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>1</dim><dim>2</dim><dim>7</dim><dim>9</dim></port></output></layer>
<layer id="1" name="size" type="Parameter" version="opset1"><data shape="2" element_type="i64"/>
<output><port id="0" precision="I64"><dim>2</dim></port></output></layer>
<layer id="2" name="ap" type="AdaptiveAvgPool" version="opset8">
<input><port id="0"><dim>1</dim><dim>2</dim><dim>7</dim><dim>9</dim></port><port id="1"><dim>2</dim></port></input>
<output><port id="2" precision="FP32"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></output></layer>
<layer id="3" name="out" type="Result" version="opset1">
<input><port id="0"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/></edges></net>
)");
    const auto r = run_irrun({"info", model});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto t = Table::parse(r.out_lines());
    for (const auto& row : t.rows) CHECK(row.at("run") == "no");
    CHECK(t.rows.size() == 4);
    CHECK(run_irrun({model, "--random-input"}).exit_code == 6);
  }
  SECTION(
      "run says no where run refuses a layer it knows: its inputs are static but not its work") {
    // Each of these had run "yes", and `irrun run` refused the model (exit 3 or 6).
    ScratchDir dir;
    const std::string xml = read_text(sample("adaptive_v11.xml"));
    const std::string bin = read_text(sample("adaptive_v11.bin"));
    const auto replaced = [](std::string s, const std::string& from, const std::string& to) {
      for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
      return s;
    };
    dir.write("empty.bin", bin);
    dir.write("minus.bin", std::string(8, '\xFF') + bin.substr(8));
    struct Case {
      std::string model;
      int run_exit;
    };
    const Case cases[] = {
        // No .bin: the Const output_size cannot be read.
        {dir.write("no_bin.xml", xml), 3},
        // Bins over an input dim 0 (an empty-bins warning): nothing to average.
        {dir.write("empty.xml",
                   replaced(replaced(xml, "<dim>7</dim>", "<dim>0</dim>"), "1,2,7,9", "1,2,0,9")),
         3},
        // output_size {-1, 4}: an output dim that is not static.
        {dir.write("minus.xml", xml), 6},
    };
    for (const auto& c : cases) {
      const auto r = run_irrun({"info", c.model});
      INFO(c.model << ":\n" << r.out << r.err);
      const auto t = Table::parse(r.out_lines());
      REQUIRE(t.row("adaptive_pool"));
      CHECK(t.row("adaptive_pool")->at("run") == "no");
      CHECK(t.row("input")->at("run") == "no");
      CHECK(run_irrun({c.model, "--random-input"}).exit_code == c.run_exit);
    }
    // The Const of a model that runs, with its .bin, does.
    CHECK(info_table("adaptive_v11.xml").row("output_size")->at("run") == "yes");
  }
  SECTION("an unused layer is named as check names it, AvgPool-1") {
    ScratchDir dir;
    std::string xml = read_text(sample("avgpool_v11.xml"));
    // A second pool on the input that no Result reads.
    const auto layers_end = xml.find("</layers>");
    xml.insert(layers_end, R"(<layer id="9" name="spare" type="AvgPool" version="opset1">
<data kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" exclude-pad="true"/>
<input><port id="0"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></input>
<output><port id="1" precision="FP32"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim></port></output></layer>
)");
    xml.insert(xml.find("</edges>"),
               R"(<edge from-layer="0" from-port="0" to-layer="9" to-port="0"/>
)");
    const auto r = run_irrun({"info", dir.write("spare.xml", xml)});
    INFO(r.out << r.err);
    const auto t = Table::parse(r.out_lines());
    REQUIRE(t.row("spare"));
    CHECK(t.row("spare")->at("type") == "AvgPool-1");
    CHECK(t.row("spare")->at("run") == "unused");
    CHECK(t.row("pool")->at("run") == "yes");
  }
  SECTION("bad_dim_v11: declared -> inferred where they differ") {
    const auto t = info_table("bad_dim_v11.xml");
    REQUIRE(t.row("pool"));
    CHECK(t.row("pool")->at("outputs") == "[1,3,4,4] -> [1,3,5,5]");
  }
}

// The run column is the executor's own per-layer refusals (irrun::require_layer_runs) on the IR's
// shapes, so it agrees with `irrun run` on every model that gets a table: the samples and the
// bad inputs. A model whose every used layer says yes runs on random inputs, but for a dynamic
// input (random inputs need a static shape: exit 4, "has a dynamic shape") or the memory limit
// (exit 7); one with a no does not; a pool that says --layer runs alone.
TEST_CASE("irrun info's run column agrees with irrun run on every sample and bad input",
          "[cli][info]") {
  std::vector<std::string> models;
  for (const auto& dir :
       {std::string(IRRUN_SAMPLES_DIR), std::string(IRRUN_TESTS_DIR) + "/bad_inputs"})
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".xml") models.push_back(e.path().string());
  std::sort(models.begin(), models.end());
  int tables = 0, whole = 0, refused = 0, alone = 0;
  for (const auto& model : models) {
    const auto r = run_irrun({"info", model});
    const auto lines = r.out_lines();
    if (std::none_of(lines.begin(), lines.end(),
                     [](const std::string& l) { return l.rfind("id  ", 0) == 0; }))
      continue;  // unreadable: no table
    ++tables;
    INFO(model << ":\n" << r.out << r.err);
    const auto t = Table::parse(lines);
    const bool runs = std::all_of(t.rows.begin(), t.rows.end(), [](const auto& row) {
      return row.at("run") == "yes" || row.at("run") == "unused";
    });
    const auto run = run_irrun({model, "--random-input", "-q"});
    INFO("run: exit " << run.exit_code << ": " << run.err);
    if (runs) {
      ++whole;
      CHECK((run.exit_code == 0 ||
             (run.exit_code == 4 && run.err.find("has a dynamic shape") != std::string::npos) ||
             (run.exit_code == 7 && run.err.find("over the memory limit") != std::string::npos)));
    } else {
      ++refused;
      CHECK(run.exit_code != 0);
    }
    for (const auto& row : t.rows)
      if (row.at("run") == "--layer") {
        ++alone;
        CHECK(run_irrun({model, "--layer", row.at("id"), "--random-input", "-q"}).exit_code == 0);
      }
  }
  CHECK(tables > 50);
  CHECK(whole > 10);
  CHECK(refused > 30);
  CHECK(alone > 3);
}

TEST_CASE("irrun info: a dynamic input leaves the shape checks to the run's shapes",
          "[cli][info]") {
  // Round 65's first require_layer_runs said no to every layer here (its output shape is not
  // static on the IR's shapes), where run with --shape runs it.
  const std::string model = std::string(IRRUN_TESTS_DIR) + "/bad_inputs/dynamic_input.xml";
  const auto r = run_irrun({"info", model});
  INFO(r.out << r.err);
  const auto t = Table::parse(r.out_lines());
  REQUIRE(t.rows.size() == 3);
  for (const auto& row : t.rows) CHECK(row.at("run") == "yes");
  CHECK(run_irrun({model, "--random-input", "--shape", "input=1,3,8,8"}).exit_code == 0);
}

TEST_CASE("irrun info: a <pre-process> block in error and an output past 2^64 bytes say no",
          "[cli][info]") {
  // Each had said yes everywhere, and `irrun run` refused the model (exit 3 and 7).
  const std::string bad = std::string(IRRUN_TESTS_DIR) + "/bad_inputs/";
  auto r = run_irrun({"info", bad + "pre_process_run.xml"});
  INFO(r.out << r.err);
  auto t = Table::parse(r.out_lines());
  CHECK(t.row("input")->at("run") == "no");
  CHECK(t.row("pool")->at("run") == "--layer");  // alone it runs, without the means
  CHECK(t.row("out")->at("run") == "no");
  CHECK(run_irrun({bad + "pre_process_run.xml", "--random-input"}).exit_code == 3);
  r = run_irrun({"info", bad + "run_output_overflows.xml"});
  INFO(r.out << r.err);
  t = Table::parse(r.out_lines());
  CHECK(t.row("pool")->at("run") == "no");
  CHECK(run_irrun({bad + "run_output_overflows.xml", "--random-input"}).exit_code == 7);
}

TEST_CASE("irrun info ends with what irrun check finds, and exits 3 on an error", "[cli][info]") {
  struct Case {
    std::string model;
    std::string error;  // a part of the one error line after the table
  };
  const Case cases[] = {
      {sample("bad_dim_v11.xml"),
       "output port 1: declared [1,3,4,4], inferred [1,3,5,5] [dim-mismatch]"},
      {std::string(IRRUN_TESTS_DIR) + "/bad_inputs/kernel_too_big.xml", "[validation]"},
      {std::string(IRRUN_TESTS_DIR) + "/bad_inputs/unknown_opset.xml", "[unknown-opset]"},
      {std::string(IRRUN_TESTS_DIR) + "/bad_inputs/op_misspelled.xml",
       "(AvgPol opset1): Opset opset1 doesn't contain the operation with type: AvgPol (did you "
       "mean AvgPool?) [unknown-opset]"},
  };
  for (const auto& c : cases) {
    INFO(c.model);
    const auto r = run_irrun({"info", c.model});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.empty());
    const auto lines = r.out_lines();
    REQUIRE_FALSE(lines.empty());
    CHECK(lines.back().find(": error: ") != std::string::npos);
    CHECK(lines.back().find(c.error) != std::string::npos);
    CHECK(irrun::testing::count_lines_with(lines, ": error: ") == 1);
    CHECK_FALSE(Table::parse(lines).rows.empty());
  }
}

TEST_CASE("irrun -q info prints the table without the summary line", "[cli][info]") {
  const auto r = run_irrun({"-q", "info", sample("avgpool_v11.xml")});
  CHECK(r.exit_code == 0);
  const auto lines = r.out_lines();
  REQUIRE_FALSE(lines.empty());
  CHECK(lines[0].rfind("id  ", 0) == 0);
  CHECK(Table::parse(lines).rows.size() == 3);
}

TEST_CASE("irrun info on a missing file fails with exit code 3", "[cli][info]") {
  ScratchDir dir;
  const auto missing = dir.file("no_such_model.xml");
  const auto r = run_irrun({"info", missing});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  const auto err = r.err_lines();
  REQUIRE(err.size() == 1);
  CHECK(err[0].find(missing) != std::string::npos);
  CHECK(err[0].find("No such file") != std::string::npos);
}

TEST_CASE("irrun info without a model is a usage error", "[cli][info]") {
  const auto r = run_irrun({"info"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(r.err.empty());
}

TEST_CASE("irrun info shortens long names by characters; --wide prints them whole", "[cli][info]") {
  ScratchDir dir;
  std::string long_name;
  for (int i = 0; i < 30; ++i) long_name += "\xC3\xA9-";  // 60 characters, 90 bytes
  auto xml = irrun::testing::read_text(sample("avgpool_v11.xml"));
  const std::string from = "name=\"pool\"";
  REQUIRE(xml.find(from) != std::string::npos);
  xml.replace(xml.find(from), from.size(), "name=\"" + long_name + "\"");
  const auto model = dir.write("long.xml", xml);

  // 21 characters, "...", the last 24: 48 in all, cut between characters (32 and 36 bytes).
  const auto shortened = long_name.substr(0, 32) + "..." + long_name.substr(90 - 36);
  const auto r = run_irrun({"info", model});
  CHECK(r.exit_code == 0);
  CHECK(irrun::testing::any_line_has_all(r.out_lines(), {"1   " + shortened + "  AvgPool-1"}));
  const auto wide = run_irrun({"info", "--wide", model});
  CHECK(wide.exit_code == 0);
  CHECK(irrun::testing::any_line_has_all(wide.out_lines(), {"1   " + long_name + "  AvgPool-1"}));
}
