import fs from "node:fs";
import path from "node:path";
import type { ResultPromise } from "execa";
import { spawnCli } from "./cli.js";

export const ADMIN = { username: "admin", password: "correct horse battery staple" };

export interface TestServer {
  url: string;
  child: ResultPromise;
  /** Everything the server printed so far (JSON log lines). */
  output(): string;
  stop(): Promise<void>;
}

/** `lds serve` as a real child process; resolves once it listens. The first admin comes from LDS_ADMIN_PASSWORD. */
export async function startServer(dataDir: string, env: Record<string, string> = {}, port = 0): Promise<TestServer> {
  const child = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", String(port)], {
    LDS_ADMIN_PASSWORD: ADMIN.password,
    ...env,
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", () => {
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.on("exit", () => reject(new Error(`server exited: ${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    async stop() {
      child.kill("SIGTERM");
      await child;
    },
  };
}

/** A response's text, and its JSON when the text is JSON (else undefined: an error page, plain text). */
export async function bodyOf(response: Response): Promise<{ text: string; json: any }> {
  const text = await response.text();
  try {
    return { text, json: JSON.parse(text) };
  } catch {
    return { text, json: undefined };
  }
}

/** A small client that keeps the session cookie like a browser would. */
export function client(url: string) {
  let cookie: string | undefined;
  const request = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(url + route, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(cookie ? { cookie } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie) cookie = setCookie.split(";")[0];
    return { status: response.status, headers: response.headers, ...(await bodyOf(response)) };
  };
  return {
    request,
    get: (route: string, headers?: Record<string, string>) => request("GET", route, undefined, headers),
    post: (route: string, body?: unknown) => request("POST", route, body ?? {}),
    put: (route: string, body: unknown) => request("PUT", route, body),
    login: (username = ADMIN.username, password = ADMIN.password) => request("POST", "/api/auth/login", { username, password }),
    get cookie() {
      return cookie;
    },
    set cookie(value: string | undefined) {
      cookie = value;
    },
  };
}

/** Wait until `check` returns a truthy value. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function serverPid(dataDir: string): number | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, "server.lock"), "utf8")).pid;
  } catch {
    return undefined;
  }
}
