// p50/p99 latency of API requests (GET /api/backup/status and PUT /api/backup/config, 4:1, 4 concurrent clients)
// against one server, without and then with a backup of its volume running in that server. Targets: p99 < 1.3x, max < 100 ms.
// Usage: node bench/latency.js [--sizes 1] [--seconds 6]
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, fresh } from "./lib/measure.js";
import { percentile as pct, startServer } from "./lib/start-server.js";
import { makeVolume } from "./make-volume.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const work = path.join(here, ".work");
const size = Number(arg("sizes", "1").split(",")[0]);
const seconds = Number(arg("seconds", "6"));
const password = "benchmark passphrase";

const volume = path.join(work, `volume-${size}g`);
await makeVolume(volume, size);
const backups = fresh(path.join(work, "latency-backups"));
const { url, server } = await startServer(volume, { LDS_ADMIN_PASSWORD: password, LDS_ADMIN_USERNAME: "bench", LDS_LOGIN_ATTEMPTS_PER_MINUTE: "1000" });

const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "bench", password }) });
const cookie = login.headers.get("set-cookie")?.split(";")[0];
if (!cookie) throw new Error(`login failed: ${login.status} ${await login.text()} (an admin named bench must be creatable on this volume)`);
const headers = { cookie, "content-type": "application/json" };
const config = (keep) => JSON.stringify({ destination: { type: "local", path: backups }, schedule: { preset: "off" }, retention: { keep }, compression: "none" });
await fetch(`${url}/api/backup/config`, { method: "PUT", headers, body: config(100) });

/** Four clients in a loop until `done()`; every fifth request is a write. Returns sorted latencies in ms. */
async function load(done) {
  const latencies = [];
  let n = 0;
  const clientLoop = async () => {
    while (!done()) {
      const write = ++n % 5 === 0;
      const started = performance.now();
      const response = write ? await fetch(`${url}/api/backup/config`, { method: "PUT", headers, body: config(100 + (n % 50)) }) : await fetch(`${url}/api/backup/status`, { headers });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${response.status} from the server`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all([clientLoop(), clientLoop(), clientLoop(), clientLoop()]);
  return latencies.sort((a, b) => a - b);
}

try {
  const idleUntil = Date.now() + seconds * 1000;
  const idle = await load(() => Date.now() > idleUntil);
  const started = await fetch(`${url}/api/backup`, { method: "POST", headers });
  if (started.status !== 202) throw new Error(`backup did not start: ${await started.text()}`);
  let running = true;
  const watcher = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, 200));
      running = (await (await fetch(`${url}/api/backup/status`, { headers })).json()).running;
    }
  })();
  const busyStart = performance.now();
  const busy = await load(() => !running);
  await watcher;
  const busySeconds = (performance.now() - busyStart) / 1000;
  const status = await (await fetch(`${url}/api/backup/status`, { headers })).json();
  if (!status.lastResult?.ok) throw new Error(`backup failed: ${JSON.stringify(status.lastResult)}`);

  console.log(`\n## API latency during a backup (${size} GiB volume, 4 clients, 1 write in 5)\n`);
  console.log("| condition | requests | p50 (ms) | p99 (ms) | max (ms) |");
  console.log("|---|---|---|---|---|");
  console.log(`| no backup (${seconds} s) | ${idle.length} | ${pct(idle, 50).toFixed(1)} | ${pct(idle, 99).toFixed(1)} | ${idle.at(-1).toFixed(1)} |`);
  console.log(
    `| backup running (${busySeconds.toFixed(1)} s, archive ${(status.lastResult.size / 1048576).toFixed(0)} MiB) | ${busy.length} | ${pct(busy, 50).toFixed(1)} | ${pct(busy, 99).toFixed(1)} | ${busy.at(-1).toFixed(1)} |`,
  );
  const ratio = pct(busy, 99) / pct(idle, 99);
  console.log(`| backup / no backup (targets: p99 < 1.3x, max < 100 ms) | | | ${ratio.toFixed(2)}x ${ratio < 1.3 ? "✅" : "❌"} | ${busy.at(-1).toFixed(1)} ${busy.at(-1) < 100 ? "✅" : "❌"} |`);
} finally {
  server.kill("SIGTERM");
}
