// ort_run.js - one model in ONNX Runtime (onnxruntime-node, CPU), timed in
// process, for bench/ort_compare.py.
//
//   node ort_run.js MODEL.onnx INPUT.bin d0,d1,... THREADS RUNS OUT.bin
//
// INPUT.bin holds the f32 input (C order) of the given shape, fed as the
// model's first input. The session: intraOpNumThreads THREADS,
// interOpNumThreads 1, sequential execution, graph optimisation "all".
// Runs the model twice (warm-up), then RUNS times; prints
//   median MS
//   min MS
// and writes the first output (f32, C order) to OUT.bin.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, input, shapeArg, threadsArg, runsArg, out] = process.argv.slice(2);
  if (!out) {
    console.error('usage: node ort_run.js MODEL.onnx INPUT.bin d0,d1,... THREADS RUNS OUT.bin');
    process.exit(2);
  }
  const shape = shapeArg.split(',').map(Number);
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threadsArg),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  let res = await session.run(feeds);
  res = await session.run(feeds);
  const runs = Number(runsArg), t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    res = await session.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  const med = runs % 2 ? t[(runs - 1) / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  console.log(`median ${med.toFixed(4)}`);
  console.log(`min ${t[0].toFixed(4)}`);
  const y = res[session.outputNames[0]].data;
  fs.writeFileSync(out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
}
main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
