#!/usr/bin/env node
// ONNX Runtime (npm onnxruntime-node, CPU execution provider) on irrun's benchmark shapes, for
// scripts/bench's peer column. ONNX Runtime is one of the named peers, at the issue's
// version (1.30).
//
//   node bench/ort/ort_bench.js OPS.json [--reps N] [--min-time S] [--filter REGEX]
//
// OPS.json comes from `irrun_bench --irrun_write_peer_ops=OPS.json`: per shape the same op as the
// oneDNN rows (kernel, strides, pads, padding mode; S8's proxy included). Each one becomes a
// one-node ONNX model, written here with a minimal protobuf encoder (no onnx package needed).
//
// Timing: the kernel time that ONNX Runtime's own profiler records for every node of a run
// (`<node>_kernel_time`), summed over the run's nodes: the pool, plus ReorderInput/ReorderOutput
// when the NCHWc layout transformer rewrote it. Session overhead and the copy of the outputs
// into JavaScript are left out, as Google Benchmark's rows time irrun's and oneDNN's kernel calls
// only. Like Google Benchmark: each repetition runs for at least --min-time seconds (and at
// least 3 runs) after a warm-up, its value is the mean per run, and the row reports the median
// of --reps repetitions. Variants, the best one reported:
//   nchw   graphOptimizationLevel 'basic': the pool on plain NCHW (MLAS);
//   nchwc  'all': the NCHWc layout transformer's blocked pool with its reorders ("nchw, level
//          all" where the transformer left the pool alone: 3-D pools);
//   global GlobalAveragePool, for windows that cover the whole plane (S4, S7), in both levels.
// Prints one JSON object: {"version": .., "rows": {"S1/threads:1": {"ms": .., "variant": ..,
// "variants": {"nchw": .., ...}}, ...}}.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

// ---- ONNX protobuf (onnx.proto: ModelProto, GraphProto, NodeProto, AttributeProto, ...).
function varint(n) {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;  // int64 as two's complement
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const int = (field, n) => [...varint(field * 8), ...varint(n)];                    // wire type 0
const msg = (field, bytes) => [...varint(field * 8 + 2), ...varint(bytes.length), ...bytes];
const str = (field, s) => msg(field, [...Buffer.from(s, 'utf8')]);
const FLOAT = 1, INT64 = 7;  // TensorProto.DataType
const attrInt = (name, v) => msg(5, [...str(1, name), ...int(20, 2), ...int(3, v)]);
const attrInts = (name, vs) => msg(5, [...str(1, name), ...int(20, 7), ...vs.flatMap((v) => int(8, v))]);
// ValueInfoProto{name, type: TypeProto{tensor_type{elem_type, shape{dim{dim_value}}}}}.
function valueInfo(field, name, elemType, dims) {
  const shape = dims ? msg(2, dims.flatMap((d) => msg(1, int(1, d)))) : [];
  return msg(field, [...str(1, name), ...msg(2, msg(1, [...int(1, elemType), ...shape]))]);
}

// One pool node x -> y (and Indices i), opset 19.
function onnxModel(op, global) {
  const attrs = global ? [] : [
    ...attrInts('kernel_shape', op.kernel), ...attrInts('strides', op.strides),
    ...attrInts('pads', op.pads),
    ...(op.op === 'AveragePool' ? attrInt('count_include_pad', op.count_include_pad) : []),
  ];
  const outputs = op.indices ? ['y', 'i'] : ['y'];
  const node = msg(1, [
    ...str(1, 'x'), ...outputs.flatMap((o) => str(2, o)), ...str(3, 'pool'),
    ...str(4, global ? 'GlobalAveragePool' : op.op), ...attrs,
  ]);
  const graph = [
    ...node, ...str(2, op.id), ...valueInfo(11, 'x', FLOAT, op.in),
    ...valueInfo(12, 'y', FLOAT, null), ...(op.indices ? valueInfo(12, 'i', INT64, null) : []),
  ];
  return Uint8Array.from([
    ...int(1, 8), ...str(2, 'irrun ort_bench'), ...msg(7, graph), ...msg(8, [...str(1, ''), ...int(2, 19)]),
  ]);
}

// ---- Timing.
const median = (v) => {
  const s = [...v].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// From a profile file: per run (in order) the summed kernel time of its nodes in ms, and whether
// the layout transformer ran the pool in NCHWc (its reorders show up as nodes).
function readProfile(file) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts);
  const nodes = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
  return {
    perRun: runs.map((r) => nodes.filter((n) => n.ts >= r.ts && n.ts <= r.ts + r.dur).reduce((s, n) => s + n.dur, 0) / 1e3),
    nchwc: nodes.some((n) => (n.args?.op_name ?? '').startsWith('Reorder')),
  };
}

async function timeVariant(op, model, level, threads, input, opts, dir) {
  const prefix = path.join(dir, `p${Date.now()}_${Math.random().toString(36).slice(2)}`);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: level, executionMode: 'sequential',
    intraOpNumThreads: threads, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: prefix,
  });
  const warmup = 3, counts = [];
  for (let i = 0; i < warmup; ++i) {
    const y = (await session.run({x: input})).y;
    if (y.dims.join('x') !== op.out.join('x'))
      throw new Error(`${op.id}: ONNX Runtime's output is ${y.dims.join('x')}, irrun's ${op.out.join('x')}`);
  }
  for (let r = 0; r < opts.reps; ++r) {
    const start = process.hrtime.bigint();
    let n = 0;
    while (n < 3 || Number(process.hrtime.bigint() - start) < opts.minTime * 1e9) {
      await session.run({x: input});
      ++n;
    }
    counts.push(n);
  }
  session.endProfiling();
  await session.release();
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f)).find((f) => f.startsWith(prefix));
  const profile = readProfile(file);
  fs.unlinkSync(file);
  const total = counts.reduce((s, n) => s + n, warmup);
  if (profile.perRun.length !== total)
    throw new Error(`${op.id}: the profile holds ${profile.perRun.length} runs, ${total} were made`);
  const perRun = profile.perRun.slice(warmup);
  const means = [];
  let at = 0;
  for (const n of counts) {
    const chunk = perRun.slice(at, at + n);
    means.push(chunk.reduce((s, x) => s + x, 0) / chunk.length);
    at += n;
  }
  return {ms: median(means), nchwc: profile.nchwc};
}

async function main() {
  const args = process.argv.slice(2);
  const opts = {reps: 5, minTime: 0.1, filter: null};
  let opsFile = null;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--reps') opts.reps = Number(args[++i]);
    else if (args[i] === '--min-time') opts.minTime = Number(args[++i]);
    else if (args[i] === '--filter') opts.filter = new RegExp(args[++i]);
    else if (!opsFile) opsFile = args[i];
    else throw new Error(`unexpected argument ${args[i]}`);
  }
  if (!opsFile || !(opts.reps > 0) || !(opts.minTime >= 0)) {
    console.error('usage: ort_bench.js OPS.json [--reps N] [--min-time S] [--filter REGEX]');
    process.exit(2);
  }
  const ops = JSON.parse(fs.readFileSync(opsFile, 'utf8'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'irrun_ort_'));
  const rows = {};
  try {
    for (const op of ops) {
      const size = op.in.reduce((a, b) => a * b, 1);
      const data = new Float32Array(size);
      for (let k = 0; k < size; ++k) data[k] = Math.random() * 2 - 1;  // [-1, 1), as irrun_bench
      const input = new ort.Tensor('float32', data, op.in);
      // A window over the whole plane without padding is also GlobalAveragePool.
      const spatial = op.in.slice(2);
      const global = op.op === 'AveragePool' && op.pads.every((p) => p === 0) &&
                     op.kernel.every((k, d) => k === spatial[d]);
      for (const threads of [1, 2]) {
        const key = `${op.id}/threads:${threads}`;
        if (opts.filter && !opts.filter.test(key)) continue;
        const variants = {};
        const models = [['', onnxModel(op, false)], ...(global ? [['global ', onnxModel(op, true)]] : [])];
        for (const [name, model] of models) {
          for (const level of ['basic', 'all']) {
            const t = await timeVariant(op, model, level, threads, input, opts, dir);
            // Level 'all' without reorders (3-D pools, S5) ran the plain pool too.
            variants[`${name}${t.nchwc ? 'nchwc' : level === 'all' ? 'nchw, level all' : 'nchw'}`] = t.ms;
          }
        }
        const best = Object.entries(variants).sort((a, b) => a[1] - b[1])[0];
        rows[key] = {ms: best[1], variant: best[0], variants, exact: op.exact};
        console.error(`ort ${key}: ${best[1].toFixed(3)} ms (${best[0]})`);
      }
    }
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
  console.log(JSON.stringify({version: ort.env.versions.node, rows}));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
