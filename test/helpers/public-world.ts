import path from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { runCli } from "./cli.js";
import type { GitServer } from "./git-server.js";
import { startServer, type TestServer } from "./server.js";
import { tempDir } from "./temp.js";

/** A data volume with teams on each plan, users of each role and their keys, and a server on it. */
export async function publicWorld(git: GitServer, servers: TestServer[], env: Record<string, string> = {}) {
  const dataDir = tempDir("lds-pub-");
  const cli = async (...args: string[]) => {
    const r = await runCli("lds", [...args, "--data-dir", dataDir]);
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  await cli("teams", "create", "free-team", "--plan", "free");
  await cli("teams", "create", "pro-team", "--plan", "pro");
  await cli("users", "add", "owner@pro.test", "--team", "pro-team", "--role", "owner");
  await cli("users", "add", "member@pro.test", "--team", "pro-team", "--role", "member");
  await cli("users", "add", "owner@free.test", "--team", "free-team", "--role", "owner");
  const key = async (email: string) => JSON.parse(await cli("keys", "create", "--email", email, "--json")).key as string;
  const keys = { proOwner: await key("owner@pro.test"), proMember: await key("member@pro.test"), freeOwner: await key("owner@free.test") };
  const server = await startServer(dataDir, { LDS_GIT_ALLOW_HTTP_HOSTS: new URL(git.base).host, LDS_GIT_DEFAULT_HOST: new URL(git.base).host, ...env });
  servers.push(server);
  const call = async (route: string, body: unknown, apiKey?: string) => {
    const response = await fetch(server.url + route, {
      method: "POST",
      headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  };
  const library = (id: string) => {
    const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    try {
      return db.prepare("SELECT state, state_reason, (SELECT count(*) FROM snippets WHERE library_id = l.id) AS snippets FROM libraries l WHERE id = ?").get(id) as
        { state: string; state_reason: string | null; snippets: number } | undefined;
    } finally {
      db.close();
    }
  };
  return { dataDir, server, keys, call, library, cli };
}
