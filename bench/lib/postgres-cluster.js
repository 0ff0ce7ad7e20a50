// A throwaway PostgreSQL cluster for a benchmark (as test/helpers/postgres-server.ts starts one for a test file):
// initdb in a temporary directory, 127.0.0.1 at a free port, its own socket directory, SCRAM passwords, fsync on
// (a benchmark measures what a server does). Run as the `postgres` system user when this process is root.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export function postgresBinDir() {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) if (fs.existsSync(path.join(root, version, "bin", "initdb"))) return path.join(root, version, "bin");
  throw new Error("PostgreSQL's server programs are not installed: run scripts/test-deps.sh (postgresql-15).");
}

const asRoot = () => process.getuid?.() === 0;
function run(bin, args) {
  const [command, argv] = asRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  execFileSync(command, argv, { stdio: "pipe", env: { ...process.env, LC_ALL: "C.UTF-8" } });
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Start a cluster; `url(database)` connects as its superuser; `stop()` stops it and removes its files. */
export async function startCluster() {
  const bin = postgresBinDir();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "lds-bench-pg-"));
  const data = path.join(root, "data");
  const sockets = path.join(root, "sockets");
  fs.mkdirSync(sockets);
  const password = randomBytes(18).toString("base64url");
  const passwordFile = path.join(root, "pwfile");
  fs.writeFileSync(passwordFile, password, { mode: 0o600 });
  if (asRoot()) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    for (const entry of [root, sockets, passwordFile]) fs.chownSync(entry, uid, gid);
  }
  const port = await freePort();
  const user = "lds_bench";
  run(path.join(bin, "initdb"), ["-D", data, "-U", user, `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"]);
  fs.rmSync(passwordFile);
  run(path.join(bin, "pg_ctl"), ["start", "-D", data, "-w", "-t", "60", "-l", path.join(root, "server.log"), "-o", `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${sockets}`]);
  const stop = () => {
    try {
      run(path.join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w"]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  };
  process.once("exit", () => fs.existsSync(root) && stop());
  return {
    bin,
    host: "127.0.0.1",
    port,
    user,
    password,
    url: (database) => `postgres://${user}:${password}@127.0.0.1:${port}/${database}`,
    stop,
  };
}
