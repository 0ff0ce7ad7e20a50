import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** `lds serve` on a volume as a child process (this build's, or `lds` another's); resolves with its URL and the child once it listens. */
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
  server.stdout.resume();
  return { url, server };
}

/** The p-th percentile of sorted values. */
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
