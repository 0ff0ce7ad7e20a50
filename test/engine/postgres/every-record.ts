import Database from "better-sqlite3";
import type { Store } from "../../../src/store/store.js";
import { bearer } from "../../store/contract/harness.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { append, publish, snippet } from "../../store/contract/snippets.contract.js";

/** Text that COPY's text format must escape, and characters of several UTF-8 lengths. */
export const AWKWARD_TEXT = "tab\there, newline\nthere, CR\r, backslash \\ and \\N and \\x41, quote ' \" , umlaut ä, 漢字, emoji 🦆, end";

/** A library id renamed by schema 13's migration, which a redirect row answers (no contract operation writes one). */
export const OLD_LIBRARY_ID = "/old/widgets";

/** What `seedEveryRecord` made, for the reads to name. */
export interface Seeded {
  library: string;
  privateLibrary: string;
  snippetIds: number[];
  retiredIds: number[];
  pendingJob: number;
  apiKey: string;
  teamId: number;
  grantId: number;
  sessionToken: string;
}

/**
 * Every kind of record lds.db holds, made through the Store contract: libraries with versions, options and branches,
 * published, retired and unfinished snippet batches, jobs (done, failed, queued with a sealed token), teams with a
 * policy and a project, users, keys (one revoked), pasted and OAuth connections, a pending OAuth state, admins with
 * a session, settings with secrets, usage and audit.
 */
export async function seedEveryRecord(store: Store): Promise<Seeded> {
  const team = await store.teams.create("acme", "pro");
  await store.teams.setPolicy(team.id, { sourceTypes: ["git"], libraries: { allow: null, deny: ["/evil/lib"] } });
  await store.teams.addProject(team.id, "proj-1", "Project One");
  const owner = await store.users.add(team, "owner@acme.test", "owner");
  await store.users.add(team, "member@acme.test", "member");
  await store.users.add(await store.teams.create("Beta", "free"), "gone@beta.test", "admin");
  await store.users.remove("gone@beta.test");
  const { key } = await store.apiKeys.create(owner.id, "laptop");
  const revoked = await store.apiKeys.create(owner.id, null);
  await store.apiKeys.revoke(revoked.prefix);
  await store.connections.addGit(team.id, "pasted-git-token", ["github.com", "git.example.test"]);
  await store.connections.addWiki({ teamId: team.id, cloudId: "cloud-pasted", siteUrl: "https://wiki.example.test", apiBase: "https://api.example.test/2", token: "pasted-wiki-token" });
  const grantId = await store.oauth.saveGrant({
    teamId: team.id,
    provider: "atlassian",
    account: "me",
    scopes: "read",
    tokens: { accessToken: "wiki-access", refreshToken: "wiki-refresh", expiresAt: "2030-01-01T00:00:00.000Z" },
    target: { kind: "wiki", sites: [{ cloudId: "cloud-1", siteUrl: "https://acme.example.test", apiBase: "https://api.example.test/1" }] },
  });
  await store.oauth.createState("state-1", { provider: "github", teamId: team.id, verifier: "v-1", redirectUri: "https://lds.test/cb", startedBy: "admin" }, 600);
  const adminId = await store.admins.create("Root", "hash");
  const session = await store.admins.createSession(adminId, 3600);

  const lib = "/acme/widgets";
  await store.libraries.createWithJob(newLibrary(lib, { description: AWKWARD_TEXT }), { branch: "main", generateDocs: true }, { url: "https://git.example.test/acme/widgets" }, "tok-1");
  await store.jobs.finish((await store.jobs.claimNext("test-runner", 60_000))!.id, "test-runner", null);
  await store.libraries.recordServedBranch(lib, { name: "main", commit: "c1", fetchedAt: "2026-11-01T00:00:00.000Z" });
  await store.libraries.setState(lib, "finalized");
  await store.versions.record(lib, { name: "v1", ref: "refs/tags/v1", commit: "c-v1" });
  await store.versions.record(lib, { name: "v2", ref: "refs/tags/v2", commit: "c-v2" });
  const retired = await publish(store, lib, "", [snippet(1), snippet(2)]);
  const live = await publish(store, lib, "", [snippet(3, { content: AWKWARD_TEXT, title: "Tabs\tand\nlines" }), snippet(4, { description: "", language: null }), snippet(5)]);
  await publish(store, lib, "v1", [snippet(6)]);
  // An ingestion cut short: a batch left writing.
  await append(store, lib, "v2", await store.snippets.openBatch(lib, "v2"), [snippet(7)]);
  const privateLibrary = `/~team-${team.id}/internal`;
  await store.libraries.createWithJob(newLibrary(privateLibrary, { private: true, teamId: team.id, ownerUserId: owner.id }), null, { url: "https://git.example.test/acme/internal" });
  await store.jobs.claimNext("test-runner", 60_000);
  await store.libraries.setState(privateLibrary, "failed", "repository_not_found: gone");
  const pendingJob = await store.jobs.enqueue({ libraryId: lib, kind: "ingest", payload: { version: "v2", branch: "v2" } }, "tok-2");
  await store.settings.set("public.title", AWKWARD_TEXT);
  await store.settings.saveWithSecrets("s3", '{"bucket":"b"}', [{ name: "s3:secret", value: "shh\ttab" }]);
  await store.usage.add([
    { libraryId: lib, day: "2026-11-01", dimension: "client", name: "api", count: 3 },
    { libraryId: lib, day: "2026-11-02", dimension: "topic", name: "hooks", count: 2 },
  ]);
  await store.audit.record({ actor: "admin", action: "library.move", subject: lib, details: { to: "x", text: AWKWARD_TEXT } });
  return { library: lib, privateLibrary, snippetIds: live.ids, retiredIds: retired.ids, pendingJob, apiKey: key, teamId: team.id, grantId, sessionToken: session.token };
}

/** What a set of reads answers, through the contract only (none of them writes). */
export async function readEveryRecord(store: Store, seeded: Seeded) {
  const lib = seeded.library;
  return {
    library: await store.libraries.find(lib),
    list: await store.libraries.list(),
    bySource: await store.libraries.bySource("git.example.test/acme/widgets"),
    redirect: await store.libraries.redirect(OLD_LIBRARY_ID),
    options: await store.libraries.options(lib),
    branches: await store.libraries.servedBranches(lib),
    versions: await store.versions.list(lib),
    newest: await store.versions.names(lib, "newest"),
    commit: await store.versions.commit(lib, "v1"),
    count: await store.snippets.count(lib),
    pinned: await store.snippets.count(lib, "v1"),
    countAll: await store.snippets.countAll(),
    totals: await store.snippets.totals(lib),
    live: await store.snippets.liveBatch(lib, ""),
    loaded: await store.snippets.load(lib, "", [...seeded.snippetIds, ...seeded.retiredIds]),
    snippetVersions: await store.snippets.versions(lib),
    token: await store.jobs.token(seeded.pendingJob),
    pending: await store.jobs.hasPending(lib, "v2"),
    queued: await store.jobs.hasQueued(),
    teams: await store.teams.list(),
    policy: await store.teams.policy(seeded.teamId),
    project: await store.teams.hasProject(seeded.teamId, "proj-1"),
    users: await store.users.list(),
    caller: await store.apiKeys.authenticate(bearer(seeded.apiKey)),
    keys: await store.apiKeys.list(),
    git: await store.connections.gitToken(seeded.teamId, "github.com", "github.com"),
    connections: await store.connections.list(),
    wikiToken: await store.connections.wikiToken((await store.connections.findWiki(seeded.teamId, "cloud-1"))!),
    grants: await store.oauth.list(),
    grantTokens: await store.oauth.tokens(seeded.grantId),
    admin: await store.admins.find("root"),
    sessionAdmin: await store.admins.sessionAdmin(seeded.sessionToken),
    title: await store.settings.get("public.title"),
    setting: await store.settings.get("s3"),
    secret: await store.settings.secret("s3:secret"),
    usage: await store.usage.read(lib, "2026-01-01"),
    audit: await store.audit.list(),
    schemaVersion: await store.schemaVersion(),
  };
}

/** Every table of an lds.db but the full-text index's and the migrations' record: rows in key order, column by column. */
export function tablesOfFile(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const names = db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name").pluck().all() as string[];
    return Object.fromEntries(
      names.map((name) => {
        const columns = db.prepare(`SELECT count(*) FROM pragma_table_info(?)`).pluck().get(name) as number;
        return [name, db.prepare(`SELECT * FROM "${name}" ORDER BY ${Array.from({ length: columns }, (_, i) => i + 1).join(", ")}`).all()];
      }),
    );
  } finally {
    db.close();
  }
}
