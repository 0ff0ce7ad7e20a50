import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfluenceStorage } from "../../src/indexing/confluence-storage.js";
import { runCli } from "../helpers/cli.js";
import { startConfluenceServer } from "../helpers/confluence-server.js";
import { eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

const WIKI_TOKEN = "confluence-oauth-token-77";
const page = (id: string, title: string, language: string, code: string) => ({
  id,
  title,
  storage:
    `<h2>Overview of ${title}</h2><p>This page explains how the ${title.toLowerCase()} part of the platform works and how to call it.</p>` +
    `<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">${language}</ac:parameter>` +
    `<ac:plain-text-body><![CDATA[${code}]]></ac:plain-text-body></ac:structured-macro>` +
    `<h2>Rollback</h2><p>Run ${title.toLowerCase()} undo.</p>`,
});
const PAGES = [
  page("1001", "Billing", "python", "bill(customer, amount=10)"),
  page("1002", "Search", "js", "search('widgets') && done()"),
  page("1003", "Auth", "go", "token := auth.Login(user)"),
  page("1004", "Queues", "java", "queue.push(job);"),
  page("1005", "Storage", "bash", "store put <file>"),
];

let wiki: Awaited<ReturnType<typeof startConfluenceServer>>;
beforeAll(async () => {
  wiki = await startConfluenceServer({ token: WIKI_TOKEN, spaceKey: "ENG", spaceId: "98304", pages: PAGES });
});
afterAll(async () => {
  await wiki?.close();
});
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function setup(token = WIKI_TOKEN) {
  const dataDir = tempDir("lds-wiki-");
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const r = await runCli("lds", [...args, "--data-dir", dataDir], env);
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  await cli(["teams", "create", "eng", "--plan", "enterprise"]);
  await cli(["teams", "add-project", "eng", "proj-1"]);
  await cli(["users", "add", "lead@eng.test", "--team", "eng", "--role", "admin"]);
  await cli(["connections", "add-wiki", "--team", "eng", "--cloud-id", "cloud-1", "--site-url", "https://eng.example.net", "--api-base", wiki.url], { LDS_CONNECTION_TOKEN: token });
  const key = JSON.parse(await cli(["keys", "create", "--email", "lead@eng.test", "--json"])).key as string;
  const server = await startServer(dataDir);
  servers.push(server);
  const submit = async (body: Record<string, unknown>) => {
    const response = await fetch(`${server.url}/v2/add/wiki`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: response.status, json: (await response.json()) as any };
  };
  const snippets = (id: string) => {
    const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
    try {
      const library = db.prepare("SELECT state, state_reason FROM libraries WHERE id = ?").get(id) as { state: string; state_reason: string } | undefined;
      const rows = db.prepare("SELECT kind, title, language, content, source_path FROM snippets WHERE library_id = ? ORDER BY id").all(id) as Array<Record<string, string>>;
      return { library, rows };
    } finally {
      db.close();
    }
  };
  const context = async (libraryId: string, query: string) => {
    const response = await fetch(`${server.url}/v2/context?${new URLSearchParams({ libraryId, query, type: "json" })}`, { headers: { authorization: `Bearer ${key}` } });
    return (await response.json()) as any;
  };
  return { server, submit, snippets, dataDir, context, cli };
}

const SPACE = { cloudId: "cloud-1", siteUrl: "https://eng.example.net", spaceKey: "ENG", spaceName: "Engineering", title: "Engineering handbook", description: "How we build things", projectId: "proj-1" };

describe("wiki spaces", () => {
  it("turns storage format into code and info snippets", () => {
    const snippets = parseConfluenceStorage(PAGES[0]!.storage, "pages/1001", "Billing");
    expect(snippets.find((s) => s.kind === "code")).toMatchObject({ title: "Overview of Billing", language: "python", content: "bill(customer, amount=10)", sourcePath: "pages/1001" });
    expect(snippets.find((s) => s.kind === "code")?.description).toMatch(/^This page explains how the billing part/);
    // The paragraph that describes the code is not repeated as prose; a three-word section is kept (issue 11).
    expect(snippets.filter((s) => s.kind === "info").map((s) => [s.title, s.content, s.pageTitle])).toEqual([["Rollback", "Run billing undo.", "Billing"]]);
    // Markup in a page's text stays text: parsed, never evaluated.
    expect(parseConfluenceStorage("<p>x &lt;script&gt;alert(1)&lt;/script&gt; <b>unclosed", "p", "T")).toEqual([
      expect.objectContaining({ kind: "info", content: "x <script>alert(1)</script> unclosed", pageTitle: "T" }),
    ]);
  });

  it("indexes a whole space through every page of the cursor pagination, with the connected account", async () => {
    const { submit, snippets, context } = await setup();
    const before = wiki.requests.length;
    const response = await submit(SPACE);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ libraryName: "/~team-1/wiki/eng", message: "Wiki space ENG was submitted for processing." });
    await eventually(async () => snippets("/~team-1/wiki/eng").library?.state === "finalized");
    const code = snippets("/~team-1/wiki/eng").rows.filter((r) => r.kind === "code");
    expect(code.map((r) => r.content)).toEqual(PAGES.map((p) => /CDATA\[(.*)\]\]/.exec(p.storage)![1]));
    expect(code.map((r) => r.source_path)).toEqual(PAGES.map((p) => `pages/${p.id}#overview-of-${p.title.toLowerCase()}`));
    // 5 pages at 2 per response: 3 listing requests, each after the first carrying the server's cursor.
    const listings = wiki.requests.slice(before).filter((r) => r.includes("/pages?"));
    expect(listings).toHaveLength(3);
    expect(listings.slice(1).every((r) => r.includes("cursor="))).toBe(true);

    // Breadcrumbs name the page by its title, not its id.
    const rollback = await context("/~team-1/wiki/eng", "how do I roll back queues");
    expect(rollback.infoSnippets[0]).toMatchObject({ pageId: "pages/1004#rollback", breadcrumb: "Queues > Rollback", content: "Run queues undo." });
    expect(rollback.codeSnippets.find((c: { codeId: string }) => c.codeId.startsWith("pages/1004"))?.pageTitle).toBe("Queues");

    const again = await submit(SPACE);
    expect(again.status).toBe(409);
    expect(again.json.error).toBe("duplicate_repo");
  });

  it("another team's space with the same key is its own library: no 409, nothing shared (issue 11)", async () => {
    const { server, submit, cli } = await setup();
    expect((await submit(SPACE)).json.libraryName).toBe("/~team-1/wiki/eng");
    await cli(["teams", "create", "ops", "--plan", "enterprise"]);
    await cli(["teams", "add-project", "ops", "proj-ops"]);
    await cli(["users", "add", "lead@ops.test", "--team", "ops", "--role", "admin"]);
    await cli(["connections", "add-wiki", "--team", "ops", "--cloud-id", "cloud-1", "--site-url", "https://eng.example.net", "--api-base", wiki.url], { LDS_CONNECTION_TOKEN: WIKI_TOKEN });
    const key = JSON.parse(await cli(["keys", "create", "--email", "lead@ops.test", "--json"])).key as string;
    const response = await fetch(`${server.url}/v2/add/wiki`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...SPACE, projectId: "proj-ops" }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { libraryName: string }).libraryName).toBe("/~team-2/wiki/eng");
  });

  it("indexes only the given pageIds", async () => {
    const { submit, snippets } = await setup();
    expect((await submit({ ...SPACE, pageIds: ["1002", "1004"] })).status).toBe(200);
    await eventually(async () => snippets("/~team-1/wiki/eng").library?.state === "finalized");
    expect(
      snippets("/~team-1/wiki/eng")
        .rows.filter((r) => r.kind === "code")
        .map((r) => r.language),
    ).toEqual(["js", "java"]);
  });

  it("refuses a project of another team, a cloud without a connected account, a foreign siteUrl and bad bodies", async () => {
    const { submit } = await setup();
    expect((await submit({ ...SPACE, projectId: "proj-of-someone-else" })).json).toMatchObject({ error: "team_not_found" });
    expect((await submit({ ...SPACE, cloudId: "cloud-2" })).json).toMatchObject({ error: "forbidden" });
    const foreign = await submit({ ...SPACE, siteUrl: "https://attacker.example" });
    expect(foreign.status).toBe(400);
    expect(foreign.json.message).toMatch(/not the site of the connected wiki account/);
    const missing = await submit({ ...SPACE, spaceKey: undefined });
    expect(missing.status).toBe(400);
    expect(missing.json.message).toMatch(/spaceKey/);
    expect((await submit({ ...SPACE, pageIds: ["../../x"] })).status).toBe(400);
  });

  it("a token the wiki refuses fails the job with the reason", async () => {
    const { submit, snippets } = await setup("expired-token");
    expect((await submit(SPACE)).status).toBe(200);
    const failed = await eventually(async () => (snippets("/~team-1/wiki/eng").library?.state === "failed" ? snippets("/~team-1/wiki/eng").library : undefined));
    expect(failed.state_reason).toMatch(/^repository_auth_failed: The wiki at 127\.0\.0\.1:\d+ refused the connection's token \(HTTP 401\)/);
  });
});
