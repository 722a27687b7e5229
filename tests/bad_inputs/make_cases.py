#!/usr/bin/env python3
"""Writes irrun's catalogue of bad inputs: small malformed models (.xml/.bin) and blobs (.npy/.bin)
in this directory, and cases.txt, the manifest tests/cli/bad_inputs_test.cpp runs.

Deterministic; run it after changing a case. `--check` exits 1 when a committed file differs.

cases.txt: one case per line, fields separated by " | ":
    NAME | EXIT | SUBSTRING | ARGS...
EXIT is irrun's exact exit code; SUBSTRING must occur in stdout or stderr; ARGS are split on
spaces, with placeholders: {dir} this directory, {out} a fresh output directory that must stay
empty, {tmp} a scratch directory, {fifo} a FIFO, {unreadable} a copy of good.npy with mode 000
(the case is skipped when running as root, where permissions do not deny), {deep} good.xml with a
1,000,000-deep element nesting in its <rt_info>, {outfile} a regular file used as an output directory, {rodir} a
read-only directory (skipped as root).
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
files = {}   # name -> bytes
cases = []   # (name, exit, substring, args)


def xml_file(name, text):
    files[name] = text.encode()


def case(name, code, substring, args):
    assert " | " not in substring
    cases.append((name, code, substring, args))


def xml_case(file, text, name, code, substring, cmd="check"):
    """A model file and the case that runs `irrun CMD` on it, with no other arguments."""
    xml_file(file, text)
    case(name, code, substring, "%s {dir}/%s" % (cmd, file))


def dims(shape):
    return "".join("<dim>%s</dim>" % d for d in shape)


def port(pid, shape, precision="FP32", extra=""):
    return '<port id="%s" precision="%s"%s>%s</port>' % (pid, precision, extra, dims(shape))


def layer(lid, name, type_, version, data=None, inputs=(), outputs=(), extra=""):
    s = '<layer id="%s" name="%s" type="%s" version="%s"%s>' % (lid, name, type_, version, extra)
    if data is not None:
        s += "<data %s/>" % " ".join('%s="%s"' % kv for kv in data)
    if inputs:
        s += "<input>%s</input>" % "".join(inputs)
    if outputs:
        s += "<output>%s</output>" % "".join(outputs)
    return s + "</layer>\n"


def net(layers, edges, version="11", head='<?xml version="1.0"?>\n'):
    e = "".join('<edge from-layer="%s" from-port="%s" to-layer="%s" to-port="%s"/>\n' % t
                for t in edges)
    return '%s<net name="bad" version="%s">\n<layers>\n%s</layers>\n<edges>\n%s</edges>\n</net>\n' % (
        head, version, "".join(layers), e)


POOL_DATA = [("kernel", "2,2"), ("strides", "2,2"), ("pads_begin", "0,0"), ("pads_end", "0,0"),
             ("rounding_type", "floor"), ("auto_pad", "explicit")]


def pool_model(data=None, in_shape=(1, 3, 8, 8), out_shape=(1, 3, 4, 4), version="opset1",
               type_="AvgPool", element_type="f32", precision="FP32", param_data=None):
    d = dict(POOL_DATA)
    for k, v in (data or {}).items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    pdata = param_data if param_data is not None else [("shape", ",".join(map(str, in_shape))),
                                                      ("element_type", element_type)]
    return net([
        layer(0, "input", "Parameter", "opset1", pdata,
              outputs=[port(0, in_shape, precision, ' names="input"')]),
        layer(1, "pool", type_, version, list(d.items()), inputs=[port(0, in_shape, precision)],
              outputs=[port(1, out_shape, precision, ' names="pool"')]),
        layer(2, "out", "Result", "opset1", inputs=[port(0, out_shape, precision)]),
    ], [(0, 0, 1, 0), (1, 1, 2, 0)])


def adaptive_model(size_shape=(2,), const_type="i64", const_size=16, out_shape=(1, 2, 3, 4),
                   in_shape=(1, 2, 7, 9)):
    return net([
        layer(0, "input", "Parameter", "opset1",
              [("shape", ",".join(map(str, in_shape))), ("element_type", "f32")],
              outputs=[port(0, in_shape, "FP32", ' names="input"')]),
        layer(1, "output_size", "Const", "opset1",
              [("element_type", const_type), ("shape", ",".join(map(str, size_shape))),
               ("offset", "0"), ("size", str(const_size))],
              outputs=[port(0, size_shape, const_type.upper())]),
        layer(2, "adaptive", "AdaptiveAvgPool", "opset8",
              inputs=[port(0, in_shape), port(1, size_shape, const_type.upper())],
              outputs=[port(2, out_shape, "FP32", ' names="adaptive"')]),
        layer(3, "out", "Result", "opset1", inputs=[port(0, out_shape)]),
    ], [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def i64s(*values):
    return b"".join(struct.pack("<q", v) for v in values)


def npy(descr, shape, data, major=1, fortran=False, header=None):
    if header is None:
        t = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            descr, "True" if fortran else "False", t)
    lsize = 2 if major == 1 else 4
    pad = (64 - (6 + 2 + lsize + len(header) + 1) % 64) % 64
    h = (header + " " * pad + "\n").encode()
    length = struct.pack("<H", len(h)) if lsize == 2 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + length + h + data


def f32s(n):
    return struct.pack("<%df" % n, *[float(i % 7) for i in range(n)])


# --- a good model and a good input, for the blob, file and output cases ---------------------
good = pool_model()
xml_file("good.xml", good)
files["good.npy"] = npy("<f4", (1, 3, 8, 8), f32s(192))
files["good.bin"] = f32s(192)  # raw input blob (not weights: good.xml has no Const)

# --- the file itself ------------------------------------------------------------------------
files["empty.xml"] = b""
case("empty model (check)", 1, "empty file, expected an IR .xml file [unreadable]", "check {dir}/empty.xml")
case("empty model (run)", 3, "empty file, expected an IR .xml file", "run {dir}/empty.xml --random-input -o {out}")
files["binary.xml"] = bytes(range(256)) * 4
case("binary model", 3, "binary data, not an IR .xml file", "info {dir}/binary.xml")
xml_case("not_xml.xml", "this is not XML at all\n", "not XML", 1, "not well-formed XML: No document element found")
xml_case("truncated.xml", good[: len(good) // 2], "truncated model", 1, "not well-formed XML")
xml_case("wrong_root.xml", '<?xml version="1.0"?>\n<model version="11"/>\n', "root is not <net>", 3, "the root element is <model>, expected <net>", cmd="info")
xml_case("ir_v7.xml", good.replace('version="11"', 'version="7"', 1), "IR v7", 1, "IR version '7' is not supported")
xml_case("no_ir_version.xml", good.replace(' version="11"', "", 1), "no IR version", 1, "IR version '' is not supported")
xml_file("billion_laughs.xml", '<?xml version="1.0"?>\n<!DOCTYPE net [\n<!ENTITY lol "lol">\n' + "".join(
    '<!ENTITY lol%d "%s">\n' % (i, ("&lol%s;" % (i - 1 if i > 1 else "")) * 10) for i in range(1, 10)) +
    ']>\n' + good.split("\n", 1)[1].replace('name="bad"', 'name="&lol9;"'))
case("billion laughs: entities are not expanded", 0, "ok: 3 layer(s) checked", "check {dir}/billion_laughs.xml")
xml_file("external_entity.xml", '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
         + good.split("\n", 1)[1].replace('name="input"', 'name="&xxe;"', 1))
case("external entity is not read", 4, "its inputs are: &xxe;", "run {dir}/external_entity.xml --input nope=x.npy")
case("1,000,000-deep nesting", 0, "ok: 3 layer(s) checked", "check {deep}")

# --- structure --------------------------------------------------------------------------------
xml_case("layer_no_id.xml", good.replace('<layer id="1" ', "<layer "), "layer without id", 1, "<layer> is missing mandatory attribute 'id'")
xml_case("layer_bad_id.xml", good.replace('<layer id="1" ', '<layer id="one" '), "non-numeric layer id", 1, "attribute 'id' of <layer> is 'one', expected a non-negative integer")
xml_case("layer_no_type.xml", good.replace(' type="AvgPool"', ""), "layer without type", 1, "is missing mandatory attribute 'type'")
xml_case("layer_no_version.xml", good.replace(' type="AvgPool" version="opset1"', ' type="AvgPool"'), "layer without version", 1, "is missing mandatory attribute 'version'")
xml_case("duplicate_layer_id.xml", good.replace('<layer id="2" ', '<layer id="1" ').replace('to-layer="2"', 'to-layer="1"'), "duplicate layer id", 1, "duplicate layer id 1")
xml_case("duplicate_port_id.xml", good.replace('<port id="1" precision="FP32" names="pool">', '<port id="0" precision="FP32" names="pool">'), "duplicate port id", 1, "duplicate port id 0")
xml_case("output_no_precision.xml", good.replace('<port id="1" precision="FP32"', '<port id="1"'), "output port without precision", 1, "output port 1: missing mandatory attribute 'precision'")
xml_case("output_bad_precision.xml", good.replace('<port id="1" precision="FP32"', '<port id="1" precision="F32"'), "output precision F32", 1, "precision 'F32' is not an element type")
xml_case("dim_negative.xml", good.replace("<dim>8</dim>", "<dim>-2</dim>", 1), "dim -2", 1, "<dim>-2</dim> is not a dimension")
xml_case("dim_text.xml", good.replace("<dim>8</dim>", "<dim>eight</dim>", 1), "dim 'eight'", 1, "<dim>eight</dim> is not a dimension")
xml_case("dim_overflow.xml", good.replace("<dim>8</dim>", "<dim>99999999999999999999</dim>", 1), "dim beyond int64", 1, "<dim>99999999999999999999</dim> is not a dimension")
xml_case("edge_no_to_port.xml", good.replace(' to-layer="2" to-port="0"', ' to-layer="2"'), "edge without to-port", 1, "<edge> is missing mandatory attribute 'to-port'")
xml_case("edge_dangling_from.xml", good.replace('from-layer="0"', 'from-layer="9"'), "edge from a missing layer", 1, "from-layer 9 does not exist")
xml_case("edge_dangling_to.xml", good.replace('to-layer="2"', 'to-layer="7"'), "edge to a missing layer", 1, "to-layer 7 does not exist")
# The pool's data edge names layer 20: OpenVINO fails at its size edge, which irrun names too,
# with the dangling edge as the likely culprit.
xml_case("edge_dangling_to_two_inputs.xml", adaptive_model().replace('to-layer="2" to-port="0"', 'to-layer="20" to-port="0"'), "edge to a missing layer of a two-input op", 1, "incoming edge(s); an edge meant for it may name a missing layer: line 10 edge 0:0 -> 20:0")
files["edge_dangling_to_two_inputs.bin"] = i64s(3, 4)
xml_case("edge_bad_from_port.xml", good.replace('from-layer="1" from-port="1"', 'from-layer="1" from-port="5"'), "edge from an unknown port", 1, "Can not find output port with id 5")
xml_case("edge_bad_to_port.xml", good.replace('to-layer="1" to-port="0"', 'to-layer="1" to-port="3"'), "edge to an unknown port", 1, "Can not find input port with id 3")
xml_case("edge_twice.xml", good.replace("</edges>", '<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>\n</edges>'), "two edges into one port", 1, "has more than one incoming edge")
xml_file("cycle.xml", good.replace('<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
                                   '<edge from-layer="1" from-port="1" to-layer="1" to-port="0"/>'))
case("cycle", 1, "is on a cycle", "check {dir}/cycle.xml")
PRE = '<pre-process mean-precision="FP32" reference-layer-name="input">%s</pre-process>\n<layers>'
xml_case("pre_process_count.xml", good.replace("<layers>", PRE % '<channel id="0"><mean value="1"/></channel>', 1), "pre-process: too few mean values", 1, "<pre-process>: Number of mean values (1) is not equal to number of channels (3)")
xml_case("pre_process_run.xml", good.replace("<layers>", PRE % ('<channel id="1"><mean value="-0.5"/></channel>' * 2), 1), "pre-process: too few mean values (run)", 3, "Number of mean values (1) is not equal to number of channels (3)", cmd="run --random-input")
xml_case("rt_info_twice.xml", good.replace('<data kernel', '<rt_info><attribute name="fused_names" version="0" value="a"/><attribute name="fused_names" version="0" value="b"/></rt_info><data kernel'), "duplicate rt_info attribute", 1, "multiple rt_info attributes are detected: fused_names")

# --- shape inference and attributes --------------------------------------------------------
def bad_pool(name, data, code, substring, cmd="check", **kw):
    xml_file(name + ".xml", pool_model(data, **kw))
    tail = " --random-input -o {out}" if cmd.startswith("run") else ""
    case(name.replace("_", " "), code, substring, "%s {dir}/%s.xml%s" % (cmd, name, tail))


bad_pool("kernel_too_big", {"kernel": "9,9"}, 1, "Kernel after dilation has size (dim: 9) larger than the data shape after padding (dim: 8) at axis 0. [validation]")
bad_pool("kernel_too_big_run", {"kernel": "9,9"}, 3, "larger than the data shape after padding", cmd="run")
bad_pool("strides_zero", {"strides": "0,2"}, 1, "Strides has zero dimension(s). {0, 2}")
bad_pool("dilations_zero", {"dilations": "1,0"}, 1, "Kernel dilations has zero dimension(s). {1, 0}", version="opset16")
bad_pool("pads_begin_rank", {"pads_begin": "0,0,0"}, 1, "Expected pads_begin size to be equal to input size - 2. Got: 3")
bad_pool("kernel_rank", {"kernel": "2", "strides": "2", "pads_begin": "0", "pads_end": "0"}, 1, "Expected kernel size to be equal to input size - 2. Got: 1")
bad_pool("input_rank_2", {"kernel": "", "strides": "", "pads_begin": "", "pads_end": ""}, 1, "Expected a 3D, 4D or 5D tensor for the input. Got: [8,8]", in_shape=(8, 8), out_shape=(8, 8))
bad_pool("ceil_torch_v1", {"rounding_type": "ceil_torch"}, 1, "Rounding CEIL_TORCH is not supported.")
bad_pool("kernel_out_of_range", {"kernel": "1099511627777,2"}, 1, "kernel value 1099511627777 is out of range (max 1099511627776)")
bad_pool("kernel_beyond_u64", {"kernel": "99999999999999999999,2"}, 1, "value 99999999999999999999 is too large")
bad_pool("kernel_negative", {"kernel": "-1,2"}, 1, "negative value -1 in an unsigned list")
bad_pool("kernel_empty_field", {"kernel": "2,,2"}, 1, "Cannot get vector of parameters!")
bad_pool("rounding_bogus", {"rounding_type": "nearest"}, 1, "\"nearest\" is not a member of enum ov::op::RoundingType")
bad_pool("auto_pad_bogus", {"auto_pad": "full"}, 1, "\"full\" is not a member of enum ov::op::PadType")
bad_pool("window_in_padding", {"pads_begin": "2,2", "pads_end": "2,2"}, 1, "is sometimes entirely in the padding area")
bad_pool("batch_zero", {}, 1, "Batch size is zero.", in_shape=(0, 3, 8, 8), out_shape=(0, 3, 4, 4))
bad_pool("channels_zero", {}, 1, "Channel count is zero.", in_shape=(1, 0, 8, 8), out_shape=(1, 0, 4, 4))
bad_pool("unknown_opset", {}, 1, "Cannot create AvgPool layer from unsupported opset: opset99 [unknown-opset]", version="opset99")
bad_pool("op_not_in_opset", {}, 1, "Opset opset1 doesn't contain the operation with type: AdaptiveAvgPool", type_="AdaptiveAvgPool")
# Any type opset1 does not register, not only the pools': OpenVINO's read_model refuses it.
bad_pool("op_misspelled", {}, 1, "Opset opset1 doesn't contain the operation with type: AvgPol (did you mean AvgPool?) [unknown-opset]", type_="AvgPol")
case("op misspelled, --strict", 1, "FAILED: 2 layer(s) checked, 1 error(s)", "check --strict {dir}/op_misspelled.xml")
case("op misspelled (run)", 3, "layer 1 'pool' (AvgPol opset1): Opset opset1 doesn't contain the operation with type: AvgPol", "run {dir}/op_misspelled.xml --random-input -o {out}")
bad_pool("op_trailing_space", {}, 1, "(did you mean AvgPool? the type \"AvgPool \" has whitespace) [unknown-opset]", type_="AvgPool ")
bad_pool("op_of_later_opset", {}, 1, "Opset opset1 doesn't contain the operation with type: Gelu (Gelu is in opset2..opset15)", type_="Gelu")
bad_pool("declared_dims_wrong", {}, 1, "declared [1,3,5,5], inferred [1,3,4,4] [dim-mismatch]", out_shape=(1, 3, 5, 5))
bad_pool("param_bad_element_type", {}, 1, "\"float\" is not a member of enum element::Type_t", param_data=[("shape", "1,3,8,8"), ("element_type", "float")])
bad_pool("param_no_shape", {}, 1, "Expected a 3D, 4D or 5D tensor for the input. Got: []", param_data=[("element_type", "f32")])
bad_pool("param_bad_shape", {}, 1, "attribute 'shape' = \"1,x,8,8\"", param_data=[("shape", "1,x,8,8"), ("element_type", "f32")])
# undefined, dynamic and string hold no tensor: run and bench named the tensor alone (exit 4);
# now the Parameter, exit 3.
for t, precision in (("undefined", "UNSPECIFIED"), ("dynamic", "FP32"), ("string", "STRING")):
    xml_file("run_%s_input.xml" % t, pool_model(element_type=t, precision=precision))
    # -q: dynamic has no precision of its own, and FP32 declared draws a warning line
    case("run %s input" % t, 3, "layer 0 'input' (Parameter-1 opset1): element_type %s has no fixed size" % t,
         "-q run {dir}/run_%s_input.xml --random-input -o {out}" % t)
case("bench string input", 3, "element_type string has no fixed size", "bench {dir}/run_string_input.xml")
xml_file("run_i4_pool.xml", pool_model(element_type="i4", precision="I4"))
files["i4_input.bin"] = bytes(96)  # i4 [1,3,8,8], bit-packed
case("run i4 pool", 6, "element type i4 is not executed", "run {dir}/run_i4_pool.xml --input {dir}/i4_input.bin -o {out}")
bad_pool("run_output_over_limit", {"kernel": "1,1", "strides": "1,1", "pads_begin": "0,0", "pads_end": "100000,100000", "exclude-pad": "false"}, 7, "over the memory limit", cmd="run --max-memory 64M", out_shape=(1, 3, 100008, 100008))
bad_pool("run_output_overflows", {"kernel": "1,1,1", "strides": "1,1,1", "pads_begin": "0,0,0", "pads_end": "1099511627776,1099511627776,1099511627776", "exclude-pad": "false"}, 7, "needs more than 2^64 bytes", cmd="run", in_shape=(1, 3, 2, 2, 2), out_shape=(1, 3, -1, -1, -1))

xml_case("edge_dims_disagree.xml", good.replace("<dim>8</dim><dim>8</dim></port></input>", "<dim>8</dim><dim>9</dim></port></input>"), "edge ends disagree", 1, "[edge-mismatch]")
xml_file("pool_two_inputs.xml", good.replace('<port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></input>',
                                             '<port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port><port id="2" precision="FP32"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></input>')
         .replace("</edges>", '<edge from-layer="0" from-port="0" to-layer="1" to-port="2"/>\n</edges>'))
case("AvgPool with two inputs", 1, "AvgPool-1 takes 1 input(s), the layer has 2 incoming edge(s) [bad-inputs]", "check {dir}/pool_two_inputs.xml")
xml_file("pool_no_output.xml", good.replace('<output><port id="1" precision="FP32" names="pool"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim></port></output>', "")
         .replace('<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>\n', ""))
case("--layer on a pool without an output port", 3, "layer 1 'pool' (AvgPool-1 opset1): AvgPool-1 has 1 output(s), the layer declares 0 output port(s)", "run {dir}/pool_no_output.xml --layer pool --random-input -o {out}")
xml_file("unsupported_op.xml", good.replace('type="AvgPool" version="opset1"', 'type="Relu" version="opset1"'))
case("run an op irrun does not implement", 6, "cannot execute 1 layer(s) of ops irrun does not implement: 'pool' (Relu)", "run {dir}/unsupported_op.xml --random-input -o {out}")

# --- Const and weights ------------------------------------------------------------------------
def bad_adaptive(name, weights, code, substring, cmd="check", **kw):
    xml_file(name + ".xml", adaptive_model(**kw))
    if weights is not None:
        files[name + ".bin"] = weights
    tail = " --random-input -o {out}" if cmd == "run" else ""
    case(name.replace("_", " "), code, substring, "%s {dir}/%s.xml%s" % (cmd, name, tail))


bad_adaptive("const_beyond_bin", i64s(3), 1, "offset 0 + size 16 exceeds the 8-byte .bin [bad-weights]")
bad_adaptive("const_size_too_small", i64s(3, 4), 1, "size 8 < 16 bytes needed for i64 [2]", const_size=8)
bad_adaptive("const_shape_overflow", i64s(3, 4), 1, "is too large [bad-weights]", size_shape=(4294967296, 4294967296))
bad_adaptive("output_size_negative", i64s(3, -5), 1, "output_size value -5 at axis 1 is negative")
bad_adaptive("output_size_count", i64s(3, 4, 5), 1, "Output shape for spatial dimension not compatible with data shape.", size_shape=(3,), const_size=24)
bad_adaptive("output_size_huge", i64s(1, 4611686018427387904), 1, "output_size value 4611686018427387904 at axis 1 is out of range")
bad_adaptive("output_size_huge_run", i64s(0, 4611686018427387904), 3, "output_size value 4611686018427387904 at axis 1 is out of range", cmd="run")
bad_adaptive("output_size_2d", i64s(3, 4), 1, "output_size must be a 1D tensor. Got: [1,2]", size_shape=(1, 2))
bad_adaptive("run_output_size_u64_max", struct.pack("<QQ", 3, 2**64 - 1), 3, "output_size value 18446744073709551615 not in range [-9223372036854775808:9223372036854775807]", cmd="run", const_type="u64")
bad_adaptive("run_output_size_dynamic", i64s(3, -1), 6, "and none of its values -1, a dynamic dim", cmd="run")
bad_adaptive("run_without_weights", None, 3, "needs weights, but none were named and there is no", cmd="run")
case("weights file missing", 3, "cannot open weights: No such file or directory", "run {dir}/good.xml --weights {dir}/nope.bin --random-input -o {out}")
case("weights is a directory", 3, "is a directory, expected a weights .bin file", "run {dir}/good.xml --weights {dir} --random-input -o {out}")
case("weights is a FIFO", 1, "not a regular file, expected a weights .bin file", "check {dir}/good.xml --weights {fifo}")

# --- model file system cases ------------------------------------------------------------------
case("model missing", 3, "nope.xml: cannot open: No such file or directory", "run {dir}/nope.xml --random-input -o {out}")
case("model is a directory", 1, "is a directory, expected an IR .xml file", "check {dir}")
case("model is a FIFO", 3, "not a regular file", "info {fifo}")
case("model is /dev/zero", 1, "not a regular file", "check /dev/zero")

# --- input blobs ------------------------------------------------------------------------------
def run_input(name, code, substring, arg, extra=""):
    case(name, code, substring, "run {dir}/good.xml --input %s%s -o {out}" % (arg, extra))


run_input("input missing", 4, "nope.npy: cannot open: No such file or directory", "{dir}/nope.npy")
run_input("input is a directory", 4, ": is a directory", "{tmp}")
run_input("input is a FIFO", 4, "not a regular file", "{fifo}")
run_input("input is /dev/zero", 4, "/dev/zero: not a regular file", "/dev/zero")
run_input("input unreadable", 4, "cannot open: Permission denied", "{unreadable}")
files["empty.npy"] = b""
run_input("empty .npy", 4, "not an .npy file", "{dir}/empty.npy")
files["bad_magic.npy"] = b"\x93NUMPX\x01\x00" + files["good.npy"][8:]
run_input(".npy bad magic", 4, "not an .npy file", "{dir}/bad_magic.npy")
files["truncated_header.npy"] = files["good.npy"][:40]
run_input(".npy header truncated", 4, "truncated .npy header", "{dir}/truncated_header.npy")
files["huge_header_len.npy"] = b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{}"
run_input(".npy header length 4 GiB", 4, "header length", "{dir}/huge_header_len.npy")
files["wrong_dtype.npy"] = npy("<i4", (1, 3, 8, 8), struct.pack("<192i", *range(192)))
run_input(".npy i32 for an f32 input", 4, "dtype i32 does not match input 'input' (f32 [1,3,8,8])", "{dir}/wrong_dtype.npy")
files["wrong_shape.npy"] = npy("<f4", (1, 3, 8, 7), f32s(168))
run_input(".npy wrong shape", 4, "shape [1,3,8,7] does not fit input 'input'", "{dir}/wrong_shape.npy")
files["scalar.npy"] = npy("<f4", (), f32s(1))
run_input(".npy scalar", 4, "shape [] does not fit input 'input'", "{dir}/scalar.npy")
files["big_endian.npy"] = npy(">f4", (1, 3, 8, 8), f32s(192))
run_input(".npy big-endian", 4, "big-endian dtype '>f4' is not supported", "{dir}/big_endian.npy")
files["fortran.npy"] = npy("<f4", (1, 3, 8, 8), f32s(192), fortran=True)
run_input(".npy fortran order", 4, "fortran_order=True is not supported", "{dir}/fortran.npy")
files["short_data.npy"] = files["good.npy"][:-4]
run_input(".npy data too short", 4, "expected 768 data bytes (f32 [1,3,8,8]), found 764 (file too short)", "{dir}/short_data.npy")
files["trailing_data.npy"] = files["good.npy"] + b"\0\0\0\0"
run_input(".npy trailing bytes", 4, "found 772 (trailing bytes)", "{dir}/trailing_data.npy")
files["shape_overflow.npy"] = npy("<f4", (4294967296, 4294967296), b"")
run_input(".npy shape overflows", 4, "overflows 64-bit sizes", "{dir}/shape_overflow.npy")
files["complex.npy"] = npy("<c8", (1,), b"\0" * 8)
run_input(".npy complex dtype", 4, "unsupported dtype '<c8'", "{dir}/complex.npy")
files["structured.npy"] = npy("", (), b"", header="{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }")
run_input(".npy structured dtype", 4, "structured dtypes are not supported", "{dir}/structured.npy")
files["bad_dict.npy"] = npy("", (), b"", header="{'descr': '<f4', 'shape': (1,), }")
run_input(".npy header without fortran_order", 4, "missing key 'fortran_order'", "{dir}/bad_dict.npy")
files["short.bin"] = f32s(191)
run_input("raw .bin one element short", 4, "expected 768 bytes (f32 [1,3,8,8]), found 764", "{dir}/short.bin")
run_input("unknown input name", 4, "'image' is not an input of", "image={dir}/good.npy")
run_input("input given twice", 4, "is given twice", "{dir}/good.npy --input input={dir}/good.npy")
run_input("input named with no file", 4, "--input input=: no file named for input 'input'", "input=")
run_input("--shape that does not fit", 4, "does not fit the input's shape [1,3,8,8]", "{dir}/good.bin", " --shape input=1,3,8,9")
run_input("--shape not static", 4, "is not a static shape", "{dir}/good.bin", " --shape input=1,3,?,8")

# --- outputs and limits -----------------------------------------------------------------------
case("output dir is a file", 5, "--output-dir is not a directory", "run {dir}/good.xml --input {dir}/good.npy -o {outfile}")
case("output dir below a file", 5, "cannot create --output-dir", "run {dir}/good.xml --input {dir}/good.npy -o {outfile}/sub")
case("output dir in /proc (denied even to root)", 5, "cannot create --output-dir", "run {dir}/good.xml --input {dir}/good.npy -o /proc/irrun-bad-inputs-out")
case("--junit's directory is a file", 5, "the directory of --junit is not a directory", "check {dir}/good.xml --junit {outfile}/report.xml")
case("--junit's directory below a file", 5, "cannot create the directory of --junit", "check {dir}/good.xml --junit {outfile}/sub/report.xml")
case("output dir read-only", 5, "cannot write: Permission denied", "run {dir}/good.xml --input {dir}/good.npy -o {rodir}")
case("--max-memory not a size", 2, "expected a size such as 1048576, 512M or 8G", "--max-memory lots run {dir}/good.xml --random-input")
# A generated input's errors name it, as a file input's do.
xml_file("dynamic_input.xml", pool_model(in_shape=(1, 3, -1, -1), out_shape=(1, 3, -1, -1),
                                         param_data=[("shape", "1,3,?,?"), ("element_type", "f32")]))
case("--max-memory too small for a generated input", 7, "input 'input' (f32 [1,3,?,?]): a f32 [1,3,999,999] tensor needs", "--max-memory 4M run {dir}/dynamic_input.xml --random-input --shape input=1,3,999,999 -o {out}")
xml_file("run_u1_input.xml", pool_model(element_type="u1", precision="U1"))
case("random values of u1", 6, "input 'input' (u1 [1,3,8,8]): cannot generate random values of element type u1", "run {dir}/run_u1_input.xml --random-input -o {out}")
case("--max-memory too small for the input", 7, "over the memory limit of 512 bytes", "--max-memory 512 run {dir}/good.xml --random-input -o {out}")


def main():
    check = "--check" in sys.argv[1:]
    manifest = "# Generated by make_cases.py: NAME | EXIT | SUBSTRING | ARGS (see make_cases.py).\n"
    manifest += "".join("%s | %d | %s | %s\n" % c for c in cases)
    files["cases.txt"] = manifest.encode()
    stale = []
    for name, data in sorted(files.items()):
        path = os.path.join(HERE, name)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old != data:
            stale.append(name)
            if not check:
                with open(path, "wb") as f:
                    f.write(data)
    if check and stale:
        print("stale: " + " ".join(stale), file=sys.stderr)
        return 1
    print("%d files, %d cases%s" % (len(files), len(cases), " (up to date)" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
