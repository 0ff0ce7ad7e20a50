import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * `lds serve` on a volume as a child process (this build's, or `lds` another's); resolves once it listens with its
 * URL, the child, and `logged(pattern)`: resolves when a log line matching it appears (or has appeared).
 */
export async function startServer(volume, env = {}, lds = path.join(root, "bin/lds.js")) {
  const server = spawn("node", [lds, "serve", "--data-dir", volume, "--port", "0"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => {
      if (out === null) return;
      out += d;
      const m = /"url":"([^"]+)"/.exec(out);
      if (m) {
        out = null;
        resolve(m[1]);
      }
    });
    server.on("exit", () => reject(new Error("server exited")));
  });
  let log = "";
  const watchers = [];
  server.stdout.on("data", (d) => {
    log += d;
    for (const w of watchers.splice(0)) {
      if (w.pattern.test(log)) w.resolve();
      else watchers.push(w);
    }
  });
  const logged = (pattern) =>
    new Promise((resolve, reject) => {
      if (pattern.test(log)) return resolve();
      watchers.push({ pattern, resolve });
      server.on("exit", () => reject(new Error(`the server exited before logging ${pattern}`)));
    });
  return { url, server, logged };
}

/** The p-th percentile of sorted values. */
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
