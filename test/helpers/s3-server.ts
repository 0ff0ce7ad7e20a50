import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { execa, type ResultPromise } from "execa";
import { ROOT } from "./cli.js";

export interface S3TestServer {
  endpoint: string;
  port: number;
  kind: "moto" | "s3rver";
  /** Settings for the S3 destination, with the dummy credentials the test server accepts. */
  settings: { endpoint: string; region: string; forcePathStyle: true; accessKeyId: string; secretAccessKey: string };
  client: S3Client;
  createBucket(name?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

function onPath(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Start a real S3-compatible server on a free loopback port: moto_server where installed (this image's Python has
 * it), else the s3rver devDependency. Neither is an error, never a skip: the S3 suite must run in CI.
 */
export interface StartOptions {
  /**
   * moto only: enforce IAM credentials after the first `freeActions` requests, which the test spends creating the
   * bucket, a user, its policy and its access key. Then wrong credentials and denied prefixes fail for real.
   */
  enforceAuthAfter?: number;
}

export async function startS3Server(options: StartOptions = {}): Promise<S3TestServer> {
  const port = await freePort();
  let child: ResultPromise;
  let kind: S3TestServer["kind"];
  let dataDir: string | undefined;
  if (onPath("moto_server")) {
    kind = "moto";
    const env = options.enforceAuthAfter === undefined ? {} : { INITIAL_NO_AUTH_ACTION_COUNT: String(options.enforceAuthAfter) };
    child = execa("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { reject: false, stdio: "ignore", env });
  } else if (options.enforceAuthAfter !== undefined) {
    throw new Error("IAM-enforcing tests need moto_server (it is on this image's Python); s3rver cannot enforce policies.");
  } else if (fs.existsSync(path.join(ROOT, "node_modules/.bin/s3rver"))) {
    kind = "s3rver";
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "s3rver-"));
    child = execa(path.join(ROOT, "node_modules/.bin/s3rver"), ["-d", dataDir, "-a", "127.0.0.1", "-p", String(port), "--silent"], {
      reject: false,
      stdio: "ignore",
      env: { NODE_OPTIONS: "--openssl-legacy-provider" },
    });
  } else {
    throw new Error("No S3-compatible test server: moto_server is not on PATH and the s3rver devDependency is missing. Run `npm ci`.");
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(endpoint);
      break;
    } catch {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`The ${kind} S3 server did not start on ${endpoint}.`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const settings = { endpoint, region: "us-east-1", forcePathStyle: true as const, accessKeyId: "test", secretAccessKey: "test" };
  const client = new S3Client({ ...settings, credentials: { accessKeyId: "test", secretAccessKey: "test" }, requestChecksumCalculation: "WHEN_REQUIRED" });
  let buckets = 0;
  return {
    endpoint,
    port,
    kind,
    settings,
    client,
    async createBucket(name = `lds-test-${process.pid}-${++buckets}`) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async stop() {
      child.kill("SIGTERM");
      await child;
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
