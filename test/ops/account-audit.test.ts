import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ADMIN, client, startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

const ACCOUNT_ACTIONS = /^(team|user|key|connection|admin)\./;

async function lds(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const result = await runCli("lds", [...args, "--data-dir", dataDir], env);
  expect(result.exitCode, `lds ${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

/** The volume's account changes, oldest first, as `lds audit --json` shows them. */
async function accountChanges(dataDir: string): Promise<AuditEntry[]> {
  const { entries } = JSON.parse(await lds(dataDir, ["audit", "--json"])) as { entries: AuditEntry[] };
  return entries.filter((e) => ACCOUNT_ACTIONS.test(e.action)).reverse();
}

/** What must not differ between the shells: everything but the actor and the time (a key is named by its own prefix). */
const record = (prefix: string) => (e: AuditEntry) => ({ action: e.action, subject: e.subject.replace(prefix, "PREFIX"), details: e.details });

describe("account changes are use cases, audit-logged whoever makes them (issue 33 item 4)", () => {
  it("the same changes from the CLI and from the API write the same records; only the actor differs", async () => {
    // The CLI on one new volume...
    const cliDir = tempDir();
    await lds(cliDir, ["teams", "create", "docs", "--plan", "pro"]);
    await lds(cliDir, ["teams", "set-plan", "docs", "enterprise"]);
    await lds(cliDir, ["users", "add", "owner@docs.test", "--team", "docs", "--role", "owner"]);
    const cliKey = JSON.parse(await lds(cliDir, ["keys", "create", "--email", "owner@docs.test", "--name", "ci", "--json"])) as { key: string; prefix: string };
    await lds(cliDir, ["teams", "restrict", "docs", "/acme/*", "/vercel/next.js"]);
    await lds(cliDir, ["keys", "revoke", cliKey.prefix]);
    await lds(cliDir, ["users", "remove", "owner@docs.test"]);

    // ...and the admin API (the policy: the public API, with the team owner's key) on another.
    const serverDir = tempDir();
    const server = await startServer(serverDir);
    let apiKey: { key: string; prefix: string };
    try {
      const admin = client(server.url);
      expect((await admin.login()).status).toBe(200);
      expect((await admin.post("/api/teams", { name: "docs", plan: "pro" })).status).toBe(201);
      expect((await admin.request("PATCH", "/api/teams/docs", { plan: "enterprise" })).status).toBe(200);
      expect((await admin.post("/api/users", { team: "docs", email: "owner@docs.test", role: "owner" })).status).toBe(201);
      const created = await admin.post("/api/keys", { email: "owner@docs.test", name: "ci" });
      expect(created.status).toBe(201);
      apiKey = created.json;
      const owner = client(server.url);
      const patched = await owner.request("PATCH", "/v2/policies", { libraries: { allow: ["/acme/*", "/vercel/next.js"] } }, { authorization: `Bearer ${apiKey.key}` });
      expect(patched.status, patched.text).toBe(200);
      expect((await admin.request("DELETE", `/api/keys/${apiKey.prefix}`)).status).toBe(200);
      expect((await admin.request("DELETE", "/api/users/owner@docs.test")).status).toBe(200);
    } finally {
      await server.stop();
    }

    const fromCli = await accountChanges(cliDir);
    const [firstAdmin, ...fromApi] = await accountChanges(serverDir);
    // The server's first admin, made from its setting at start, is audit-logged too (never its password).
    expect(firstAdmin).toMatchObject({ actor: "server:LDS_ADMIN_PASSWORD", action: "admin.create", subject: "admin:1", details: { username: "admin" } });
    expect(JSON.stringify(firstAdmin)).not.toContain(ADMIN.password);
    const expected = [
      { action: "team.create", subject: "team:1", details: { name: "docs", plan: "pro" } },
      { action: "team.plan", subject: "team:1", details: { from: "pro", to: "enterprise" } },
      { action: "user.add", subject: "user:1", details: { email: "owner@docs.test", team: "docs", role: "owner" } },
      { action: "key.create", subject: "key:PREFIX", details: { email: "owner@docs.test", name: "ci" } },
      {
        action: "team.policy",
        subject: "team:1",
        details: { policy: { sourceTypes: ["git", "wiki"], libraries: { allow: ["/acme/*", "/vercel/next.js"], deny: [] } } },
      },
      { action: "key.revoke", subject: "key:PREFIX", details: {} },
      { action: "user.remove", subject: "user:1", details: { email: "owner@docs.test" } },
    ];
    expect(fromCli.map(record(cliKey.prefix))).toEqual(expected);
    expect(fromApi.map(record(apiKey.prefix))).toEqual(expected);

    // The actor is the one difference: the operator's OS user, the signed-in admin, the key that changed its policy.
    expect(new Set(fromCli.map((e) => e.actor)).size).toBe(1);
    expect(fromCli[0]!.actor).toMatch(/^cli:\S+$/);
    expect(fromApi.map((e) => e.actor)).toEqual(["admin:admin", "admin:admin", "admin:admin", "admin:admin", `key:${apiKey.prefix}`, "admin:admin", "admin:admin"]);
    // No key is ever in the log, only its prefix.
    expect(JSON.stringify(fromCli)).not.toContain(cliKey.key);
    expect(JSON.stringify(fromApi)).not.toContain(apiKey.key);
  });

  it("lds audit shows the CLI's other account changes (init, projects, connections, admins), without their secrets", async () => {
    const dataDir = tempDir();
    const made = JSON.parse(await lds(dataDir, ["init", "--email", "ops@example.com", "--team", "platform", "--json"])) as { key: string; prefix: string };
    await lds(dataDir, ["teams", "add-project", "platform", "proj-7", "--project-name", "Handbook"]);
    await lds(dataDir, ["connections", "add-git", "--team", "platform", "--host", "git.example.test"], { LDS_CONNECTION_TOKEN: "pasted-token-123" });
    const [connection] = JSON.parse(await lds(dataDir, ["connections", "list", "--json"])).connections as Array<{ id: number }>;
    await lds(dataDir, ["connections", "remove", String(connection!.id)]);
    await lds(dataDir, ["admin", "create", "--username", "second"], { LDS_ADMIN_PASSWORD: "a long enough passphrase" });

    const changes = await accountChanges(dataDir);
    expect(changes.map((e) => ({ action: e.action, subject: e.subject, details: e.details }))).toEqual([
      { action: "team.create", subject: "team:1", details: { name: "platform", plan: "enterprise" } },
      { action: "user.add", subject: "user:1", details: { email: "ops@example.com", team: "platform", role: "owner" } },
      { action: "key.create", subject: `key:${made.prefix}`, details: { email: "ops@example.com", name: "created by lds init" } },
      { action: "team.project", subject: "team:1", details: { projectId: "proj-7", name: "Handbook" } },
      { action: "connection.add", subject: "team:1", details: { kind: "git", hosts: ["git.example.test"] } },
      { action: "connection.disconnect", subject: `connection:${connection!.id}`, details: { kind: "git" } },
      { action: "admin.create", subject: "admin:1", details: { username: "second" } },
    ]);
    expect(changes.every((e) => /^cli:\S+$/.test(e.actor))).toBe(true);

    // The text listing names them too, and no secret appears in it.
    const text = await lds(dataDir, ["audit"]);
    expect(text).toMatch(/ cli:\S+ {2}team\.create {2}team:1 /);
    expect(text).toContain("connection.add");
    for (const secret of [made.key, "pasted-token-123", "a long enough passphrase"]) expect(text).not.toContain(secret);
  });
});
