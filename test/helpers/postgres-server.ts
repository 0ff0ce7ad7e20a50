import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import pg from "pg";
import { freePort } from "./s3-server.js";

/**
 * A throwaway PostgreSQL cluster for one test file: initdb in a temporary directory, listening on 127.0.0.1 at a
 * free port with its own socket directory, password (SCRAM) authentication only, as production connects. Tests
 * connect as `lds`, a role that is not a superuser and owns the databases it is given, each one fresh and empty.
 */
export interface PostgresTestServer {
  host: string;
  port: number;
  /** A new empty database owned by `lds`: its URL (with the password) and a drop that removes it. */
  newDatabase(): Promise<TestDatabase>;
  /** Run SQL as the cluster's superuser in one database (seeding what no contract operation writes). */
  asSuperuser<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T>;
  /** Stop the server (fast shutdown: connections are cut), keeping its files, as an outage does. */
  down(): Promise<void>;
  /** Start it again on the same port, after `down`. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

const SUPERUSER = "lds_admin";
const APP_ROLE = "lds";

/** The directory of initdb, pg_ctl and postgres: Debian keeps them off PATH, under /usr/lib/postgresql/<n>/bin. */
export function postgresBinDir(): string {
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    if (fs.existsSync(path.join(dir, "initdb"))) return dir;
  } catch {
    // pg_config comes with libpq-dev, which need not be installed: look where Debian's server packages put them.
  }
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const dir = path.join(root, version, "bin");
    if (fs.existsSync(path.join(dir, "initdb"))) return dir;
  }
  throw new Error("PostgreSQL's server programs (initdb, pg_ctl) are not installed: run scripts/test-deps.sh (Debian package postgresql-15).");
}

/** PostgreSQL refuses to run as root (CI's tests do): then the cluster runs as the `postgres` system user. */
const runsAsRoot = () => process.getuid?.() === 0;

async function run(bin: string, args: string[]): Promise<void> {
  const [command, argv] = runsAsRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  await execa(command, argv, { stdio: "pipe", env: { LC_ALL: "C.UTF-8" } });
}

export async function startPostgres(): Promise<PostgresTestServer> {
  const bin = postgresBinDir();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "lds-pg-"));
  const data = path.join(root, "data");
  const sockets = path.join(root, "sockets");
  fs.mkdirSync(sockets);
  const superPassword = randomBytes(18).toString("base64url");
  const appPassword = randomBytes(18).toString("base64url");
  const passwordFile = path.join(root, "pwfile");
  fs.writeFileSync(passwordFile, superPassword, { mode: 0o600 });
  if (runsAsRoot()) {
    const owner = execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim();
    const group = execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim();
    for (const entry of [root, sockets, passwordFile]) fs.chownSync(entry, Number(owner), Number(group));
  }
  const host = "127.0.0.1";
  const port = await freePort();
  let started = false;
  const options = [`-c listen_addresses=${host}`, `-p ${port}`, `-c unix_socket_directories=${sockets}`, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"];
  const start = async () => {
    await run(path.join(bin, "pg_ctl"), ["start", "-D", data, "-w", "-t", "60", "-l", path.join(root, "server.log"), "-o", options.join(" ")]);
    started = true;
  };
  const halt = async () => {
    if (started) await run(path.join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w"]);
    started = false;
  };
  // A test process that ends without its afterAll (a failed hook, a timeout) must not leave a server running on a
  // shared machine: stopped at once, synchronously, on the way out. Vitest ends its workers with SIGTERM, which the
  // handler passes on once the server is stopped, so the process ends as it would have.
  const stopOnExit = () => {
    process.off("exit", stopOnExit);
    process.off("SIGTERM", stopOnSignal);
    const argv = [path.join(bin, "pg_ctl"), "stop", "-D", data, "-m", "immediate"];
    try {
      if (!started) {
        // Nothing runs.
      } else if (runsAsRoot()) execFileSync("runuser", ["-u", "postgres", "--", ...argv], { stdio: "ignore" });
      else execFileSync(argv[0]!, argv.slice(1), { stdio: "ignore" });
    } catch {
      // Already stopped.
    }
    started = false;
    fs.rmSync(root, { recursive: true, force: true });
  };
  const stopOnSignal = () => {
    stopOnExit();
    process.kill(process.pid, "SIGTERM");
  };
  process.on("exit", stopOnExit);
  process.on("SIGTERM", stopOnSignal);
  try {
    await run(path.join(bin, "initdb"), ["-D", data, "-U", SUPERUSER, `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"]);
    fs.rmSync(passwordFile);
    await start();
  } catch (err) {
    stopOnExit();
    throw err;
  }

  const asSuperuser = async <T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ host, port, user: SUPERUSER, password: superPassword, database });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  await asSuperuser("postgres", (c) => c.query(`CREATE ROLE ${APP_ROLE} LOGIN PASSWORD '${appPassword}'`));

  let counter = 0;
  return {
    host,
    port,
    async newDatabase() {
      const name = `lds_t${++counter}`;
      // FILE_COPY: with fsync off, copying template0's files is several times faster than WAL_LOG (PostgreSQL
      // 15's default), which writes every page of it to the WAL.
      await asSuperuser("postgres", (c) => c.query(`CREATE DATABASE ${name} OWNER ${APP_ROLE} TEMPLATE template0 STRATEGY FILE_COPY`));
      return {
        name,
        url: `postgres://${APP_ROLE}:${appPassword}@${host}:${port}/${name}`,
        drop: async () => {
          await asSuperuser("postgres", (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
        },
      };
    },
    asSuperuser,
    down: halt,
    up: start,
    async stop() {
      process.off("exit", stopOnExit);
      process.off("SIGTERM", stopOnSignal);
      try {
        await halt();
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
