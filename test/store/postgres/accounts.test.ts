import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { Store } from "../../../src/store/store.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { copyRowsToPostgres } from "../../helpers/copy-rows.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";
import { bearer, expectLdsError } from "../contract/harness.js";

// What the records contract leaves to each engine, where the PostgreSQL engine must do as lds.db does: the account
// tables' rows (key digests, sealed tokens, session digests) mean the same in both, and lists and names compare alike.

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

it("reads accounts made by the SQLite engine, rows copied column for column: keys authenticate, tokens unseal, sessions open", async () => {
  const root = tempDir("lds-pg-accounts-");
  const volume = await openVolume(root);
  const sqlite = volume.store;
  const team = await sqlite.teams.create("acme", "pro");
  const user = await sqlite.users.add(team, "a@acme.test", "owner");
  const { key } = await sqlite.apiKeys.create(user.id, "laptop");
  await sqlite.connections.addGit(team.id, "pasted-git-token", ["github.com"]);
  const grant = await sqlite.oauth.saveGrant({
    teamId: team.id,
    provider: "atlassian",
    account: "me",
    scopes: "read",
    tokens: { accessToken: "wiki-access", refreshToken: "wiki-refresh", expiresAt: "2030-01-01T00:00:00.000Z" },
    target: { kind: "wiki", sites: [{ cloudId: "cloud-1", siteUrl: "https://acme.example.test", apiBase: "https://api.example.test/1" }] },
  });
  const adminId = await sqlite.admins.create("root", "hash");
  const session = await sqlite.admins.createSession(adminId, 3600);
  const expected = {
    caller: await sqlite.apiKeys.authenticate(bearer(key)),
    git: await sqlite.connections.gitToken(team.id, "github.com", "github.com"),
    tokens: await sqlite.oauth.tokens(grant),
    grants: await sqlite.oauth.list(),
    connections: await sqlite.connections.list(),
    keys: await sqlite.apiKeys.list(),
  };
  volume.close();

  const database = await server.newDatabase();
  const schemaOnly = await openPostgresStore({ settings: { url: database.url } }, volume.key);
  await schemaOnly.close();
  await copyRowsToPostgres(path.join(root, "lds.db"), database.url, ["teams", "users", "api_keys", "oauth_grants", "connections", "secrets", "admins", "admin_sessions"]);
  const opened = await openPostgresStore({ settings: { url: database.url } }, volume.key);
  try {
    const postgres = opened.store;
    expect(await postgres.apiKeys.authenticate(bearer(key))).toEqual(expected.caller);
    expect(await postgres.connections.gitToken(team.id, "github.com", "github.com")).toEqual(expected.git);
    expect(expected.git.token).toBe("pasted-git-token");
    expect(await postgres.oauth.tokens(grant)).toEqual(expected.tokens);
    expect(await postgres.connections.wikiToken((await postgres.connections.findWiki(team.id, "cloud-1"))!)).toBe("wiki-access");
    expect(await postgres.oauth.list()).toEqual(expected.grants);
    expect(await postgres.connections.list()).toEqual(expected.connections);
    expect(await postgres.apiKeys.list()).toEqual(expected.keys);
    expect(await postgres.admins.sessionAdmin(session.token)).toEqual({ id: adminId, username: "root" });
  } finally {
    await opened.close();
    await database.drop();
  }
});

/** The same expectations on a SQLite volume and on a PostgreSQL database made by `makeDatabase`. */
async function onBothEngines(makeDatabase: () => Promise<{ url: string; drop(): Promise<void> }>, check: (store: Store) => Promise<void>): Promise<void> {
  const volume = await openVolume(tempDir("lds-pg-accounts-"));
  try {
    await check(volume.store);
  } finally {
    volume.close();
  }
  const database = await makeDatabase();
  const opened = await openPostgresStore({ settings: { url: database.url } }, volume.key);
  try {
    await check(opened.store);
  } finally {
    await opened.close();
    await database.drop();
  }
}

it("finds admins whatever the case of their username, and refuses a second that differs only in case, as lds.db's NOCASE column does", async () => {
  await onBothEngines(
    () => server.newDatabase(),
    async (store) => {
      const id = await store.admins.create("Root", "hash-1");
      expect(await store.admins.find("rOOT")).toEqual({ id, username: "Root", passwordHash: "hash-1" });
      await expectLdsError(store.admins.create("ROOT", "hash-2"), "validation_error");
      expect(await store.admins.count()).toBe(1);
    },
  );
});

it("lists teams and users in byte order, as SQLite sorts text, even where the database's own collation is a language's", async () => {
  // A database whose default collation is ICU's English, which sorts "acme" before "Zeta"; byte order does not.
  const english = async () => {
    const database = await server.newDatabase();
    await server.asSuperuser("postgres", async (c) => {
      await c.query(`DROP DATABASE ${database.name}`);
      await c.query(`CREATE DATABASE ${database.name} OWNER lds TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    });
    const collated = await server.asSuperuser(database.name, async (c) => (await c.query("SELECT array_agg(n ORDER BY n) AS names FROM unnest(ARRAY['Zeta', 'acme']) n")).rows[0].names);
    expect(collated, "the database sorts as English does").toEqual(["acme", "Zeta"]);
    return database;
  };
  await onBothEngines(english, async (store) => {
    const names = ["acme", "Zeta", "beta", "Beta"];
    const teams = [];
    for (const name of names) teams.push(await store.teams.create(name, "free"));
    expect((await store.teams.list()).map((t) => t.name)).toEqual(["Beta", "Zeta", "acme", "beta"]);
    for (const email of ["b@x.test", "B@x.test", "a@x.test"]) await store.users.add(teams[1]!, email, "member");
    expect((await store.users.list()).map((u) => u.email)).toEqual(["B@x.test", "a@x.test", "b@x.test"]);
  });
});

it("removes, reconnects and refreshes one team's grant at once, round after round: no deadlock, no token left behind", async () => {
  const database = await server.newDatabase();
  const opened = await openPostgresStore({ settings: { url: database.url, max: 4 } }, randomBytes(32));
  try {
    const store = opened.store;
    const team = await store.teams.create("acme", "pro");
    const grant = (n: number) => ({
      teamId: team.id,
      provider: "github",
      account: "octo",
      scopes: "repo",
      tokens: { accessToken: `a-${n}`, refreshToken: `r-${n}` },
      target: { kind: "git" as const, hosts: ["github.com"] },
    });
    let current = await store.oauth.saveGrant(grant(0));
    for (let round = 1; round <= 30; round++) {
      const [, saved] = await Promise.all([store.oauth.remove(current), store.oauth.saveGrant(grant(round)), store.oauth.updateTokens(current, { accessToken: "refreshed", refreshToken: "rotated" })]);
      expect(await store.oauth.tokens(current)).toBeUndefined();
      current = saved;
    }
    expect((await store.oauth.list()).map((g) => g.id)).toEqual([current]);
    // Only the live grant's two tokens are sealed: none of a removed grant came back through a refresh.
    const names = await server.asSuperuser(database.name, async (c) => (await c.query<{ name: string }>("SELECT name FROM secrets ORDER BY name")).rows.map((r) => r.name));
    expect(names).toEqual([`oauth:${current}:access`, `oauth:${current}:refresh`]);
  } finally {
    await opened.close();
    await database.drop();
  }
});
