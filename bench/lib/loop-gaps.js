// A preload for `lds serve` (bench/swap.js --loop-gaps): times the main thread's event loop every 5 ms and writes
// every pause over 60 ms, with its wall-clock time, to $LDS_BENCH_LOOP_GAPS once a second. It tells a pause of
// the server's own event loop from one of the measuring client (both run on the same two cores).
import fs from "node:fs";
import { isMainThread } from "node:worker_threads";

const file = process.env.LDS_BENCH_LOOP_GAPS;
if (isMainThread && file) {
  const gaps = [];
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > 60) gaps.push({ ms: Math.round(now - last), at: new Date().toISOString().slice(11, 23) });
    last = now;
  }, 5).unref();
  setInterval(() => fs.writeFileSync(file, JSON.stringify(gaps)), 1000).unref();
}
