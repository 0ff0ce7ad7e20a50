import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";

/** Run a command under GNU time: wall seconds and peak RSS of its largest process. */
export function measure(argv, env = {}) {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M", ...argv], { encoding: "utf8", maxBuffer: 1 << 26, env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${argv.join(" ")} failed: ${result.stderr}`);
  const [seconds, kib] = result.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { seconds, rssMiB: kib / 1024, stdout: result.stdout };
}

/** `measure` without blocking this process: for benchmarks whose servers run in this same process. */
export function measureAsync(argv, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/time", ["-f", "%e %M", ...argv], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${argv.join(" ")} failed: ${stderr}`));
      const [seconds, kib] = stderr.trim().split("\n").pop().split(" ").map(Number);
      resolve({ seconds, rssMiB: kib / 1024, stdout });
    });
  });
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Run `prepare` then the command `runs` times: median time, largest RSS. */
export function bench(runs, argv, { prepare = () => {}, env = {} } = {}) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    prepare();
    samples.push(measure(typeof argv === "function" ? argv() : argv, env));
  }
  return { seconds: median(samples.map((s) => s.seconds)), rssMiB: Math.max(...samples.map((s) => s.rssMiB)) };
}

export function fresh(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/**
 * Several commands measured in turns (a, b, c, a, b, c…) rather than each `runs` times in a row, so that drift in
 * the machine's state (the writeback of an earlier step, a warming cache, a neighbour) falls on all of them alike.
 * Each case is { argv, prepare? }; answers one { seconds (median), rssMiB (largest) } per case, in order.
 */
export function benchInTurns(runs, cases) {
  const samples = cases.map(() => []);
  for (let i = 0; i < runs; i++) {
    cases.forEach(({ argv, prepare = () => {} }, k) => {
      prepare();
      samples[k].push(measure(argv));
    });
  }
  return samples.map((list) => ({ seconds: median(list.map((s) => s.seconds)), rssMiB: Math.max(...list.map((s) => s.rssMiB)) }));
}
