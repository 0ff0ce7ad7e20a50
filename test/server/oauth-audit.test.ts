import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startOAuthFixture } from "../helpers/oauth-provider.js";
import { client, startServer, type TestServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

const ACCESS_TOKEN = "gho_oauth_audit_token_7731";
const CLIENT = { clientId: "lds-audit-app", clientSecret: "lds-audit-app-secret-9876" };

interface AuditEntry {
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

let oauth: Awaited<ReturnType<typeof startOAuthFixture>>;
let server: TestServer;
let dataDir: string;

beforeAll(async () => {
  // Atlassian is not used here: its Confluence stand-in is never reached.
  oauth = await startOAuthFixture({ ...CLIENT, githubAccessToken: ACCESS_TOKEN, confluence: { url: "http://127.0.0.1:9", token: "unused", cloudId: "none", siteUrl: "https://none.example.net" } });
  dataDir = tempDir();
  server = await startServer(dataDir);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await oauth?.close();
});

describe("OAuth connections are use cases (issue 33 item 4)", () => {
  it("a provider's settings, a Connect and a Disconnect are audit-logged with the admin who made them, without a token or secret", async () => {
    const admin = client(server.url);
    expect((await admin.login()).status).toBe(200);
    expect((await admin.post("/api/teams", { name: "docs", plan: "pro" })).status).toBe(201);
    expect((await admin.put("/api/oauth/providers/github", { ...CLIENT, ...oauth.github, gitHosts: ["git.example.test"] })).status).toBe(200);

    // Connect: the admin starts the flow, consents at the provider, and the provider redirects to the callback
    // (which carries no session: the admin is known from the flow's state).
    const started = await admin.post("/api/oauth/github/start", { team: "docs" });
    expect(started.status, started.text).toBe(200);
    const query = new URL(started.json.authorizeUrl as string).searchParams;
    const consent = await fetch(`${oauth.base}/github/consent`, { method: "POST", body: new URLSearchParams({ query: query.toString(), decision: "allow" }), redirect: "manual" });
    const callback = await fetch(consent.headers.get("location")!, { redirect: "manual" });
    expect(callback.status).toBe(303);
    expect(callback.headers.get("location")).toMatch(/^\/dashboard\/connections\?connected=/);

    const { connections } = (await admin.get("/api/connections")).json as { connections: Array<{ id: number; account: string }> };
    expect(connections).toMatchObject([{ account: "octo-dev" }]);
    const disconnected = await admin.request("DELETE", `/api/connections/${connections[0]!.id}`);
    expect(disconnected.status, disconnected.text).toBe(200);
    expect(disconnected.json).toEqual({ disconnected: connections[0]!.id, revokedAtProvider: true, note: null });
    await server.stop();

    const audit = await runCli("lds", ["audit", "--json", "--data-dir", dataDir]);
    expect(audit.exitCode, audit.stderr).toBe(0);
    const entries = (JSON.parse(audit.stdout) as { entries: AuditEntry[] }).entries.reverse();
    const oauthChanges = entries.filter((e) => /^(connection|oauth)\./.test(e.action)).map(({ actor, action, subject, details }) => ({ actor, action, subject, details }));
    expect(oauthChanges).toEqual([
      { actor: "admin:admin", action: "oauth.provider", subject: "github", details: { clientId: CLIENT.clientId, secretChanged: true } },
      { actor: "admin:admin", action: "connection.connect", subject: "team:1", details: { provider: "github", account: "octo-dev" } },
      { actor: "admin:admin", action: "connection.disconnect", subject: `connection:${connections[0]!.id}`, details: { disconnected: connections[0]!.id, revokedAtProvider: true, note: null } },
    ]);
    const logged = JSON.stringify(entries);
    expect(logged).not.toContain(ACCESS_TOKEN);
    expect(logged).not.toContain(CLIENT.clientSecret);
  });
});
