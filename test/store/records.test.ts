import { afterEach, describe, expect, it } from "vitest";
import { servedBranch } from "../../src/store/record-values.js";
import type { Library } from "../../src/store/records.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";
import { dbOf } from "../helpers/sqlite-db.js";

const open: OpenVolume[] = [];
afterEach(() => {
  for (const volume of open.splice(0).reverse()) volume.close();
});

async function volume(): Promise<OpenVolume> {
  const opened = await openVolume(tempDir());
  open.push(opened);
  return opened;
}

/** Every key of a record and of the objects inside it that is spelled as a column (snake_case), with its path. */
function snakeKeys(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => snakeKeys(v, `${at}[${i}]`));
  if (value === null || typeof value !== "object" || value instanceof Date) return [];
  return Object.entries(value).flatMap(([key, v]) => [...(key.includes("_") ? [`${at}.${key}`] : []), ...snakeKeys(v, `${at}.${key}`)]);
}

describe("the records the SQLite engine hands over (store/records.ts)", () => {
  it("a library is camelCase, private a boolean and its served branch a parsed list, from every read", async () => {
    const { store } = await volume();
    const team = await store.teams.create("acme", "pro");
    const owner = await store.users.add(team, "owner@acme.test", "owner");
    await store.libraries.createWithJob(
      { id: "/~team-1/acme/widgets", teamId: team.id, title: "widgets", source: "git", sourceUrl: "https://git.test/acme/widgets", sourceKey: "git.test/acme/widgets", private: true, ownerUserId: owner.id },
      { branch: "main" },
      { url: "https://git.test/acme/widgets", teamId: team.id },
    );
    const fresh = (await store.libraries.find("/~team-1/acme/widgets"))!;
    expect(fresh).toEqual<Library>({
      id: "/~team-1/acme/widgets",
      teamId: team.id,
      title: "widgets",
      description: "",
      private: true,
      source: "git",
      sourceUrl: "https://git.test/acme/widgets",
      sourceKey: "git.test/acme/widgets",
      branches: [],
      ownerUserId: owner.id,
      state: "queued",
      stateReason: null,
      updatedAt: expect.any(String) as string,
    });
    expect(servedBranch(fresh)).toBeUndefined();

    const record = { name: "main", commit: "0123abcd", fetchedAt: "2026-11-27T14:00:00.000Z" };
    await store.libraries.recordServedBranch(fresh.id, record);
    await store.libraries.setState(fresh.id, "failed", "repository_auth_failed: refused");
    const [listed] = await store.libraries.list();
    const [bySource] = await store.libraries.bySource("git.test/acme/widgets");
    for (const library of [await store.libraries.find(fresh.id), listed, bySource]) {
      expect(library).toMatchObject({ branches: [record], stateReason: "repository_auth_failed: refused", private: true });
      expect(servedBranch(library!)).toBe("main");
      expect(snakeKeys(library)).toEqual([]);
    }
    expect(await store.libraries.servedBranches(fresh.id)).toEqual([record]);
  });

  it("jobs, users, admins and snippets carry their ids and fields camelCase, never a column's name", async () => {
    const opened = await volume();
    const { store } = opened;
    const db = dbOf(opened);
    const team = await store.teams.create("acme", "free");
    const user = await store.users.add(team, "dev@acme.test", "member");
    expect(user).toEqual({ id: user.id, teamId: team.id, email: "dev@acme.test", role: "member" });
    expect(await store.users.require("dev@acme.test")).toEqual(user);
    expect(await store.users.list()).toEqual([{ ...user, team: "acme" }]);

    await store.admins.create("root", "scrypt$hash");
    expect(await store.admins.find("root")).toEqual({ id: expect.any(Number) as number, username: "root", passwordHash: "scrypt$hash" });

    await store.libraries.create({ id: "/acme/docs", teamId: null, title: "docs", source: "git", sourceUrl: "https://git.test/acme/docs", sourceKey: "git.test/acme/docs", private: false, ownerUserId: null });
    await store.jobs.enqueue({ libraryId: "/acme/docs", kind: "refresh", payload: { url: "https://git.test/acme/docs" } });
    const job = await store.jobs.claimNext("runner", 60_000);
    expect(job).toMatchObject({ id: expect.any(Number) as number, libraryId: "/acme/docs", kind: "refresh", payload: { url: "https://git.test/acme/docs" }, leaseOwner: "runner", attempts: 1 });
    expect(await store.jobs.requeueRunningAsSoleProcess()).toBe(1);

    // Rows from before snippet batches (batch 0) are what readers see of a library without a published batch.
    const insert = db.prepare("INSERT INTO snippets (library_id, kind, title, description, content, source_path, page_title) VALUES ('/acme/docs', 'info', ?, '', ?, ?, ?)");
    const first = Number(insert.run("Install", "npm i docs", "README.md#install", "Getting started").lastInsertRowid);
    const second = Number(insert.run("Usage", "docs()", null, null).lastInsertRowid);
    expect(await store.snippets.load("/acme/docs", "", [second, first])).toEqual([
      { id: second, kind: "info", title: "Usage", description: "", language: null, content: "docs()", sourcePath: null, pageTitle: null },
      { id: first, kind: "info", title: "Install", description: "", language: null, content: "npm i docs", sourcePath: "README.md#install", pageTitle: "Getting started" },
    ]);
    const pages = [];
    for await (const page of store.snippets.pages(1)) pages.push(...page);
    expect(pages.map((s) => ({ id: s.id, libraryId: s.libraryId, version: s.version, batch: s.batch }))).toEqual([
      { id: first, libraryId: "/acme/docs", version: "", batch: 0 },
      { id: second, libraryId: "/acme/docs", version: "", batch: 0 },
    ]);
    expect(snakeKeys([job, user, pages, await store.apiKeys.list(), await store.connections.list(), await store.audit.list()])).toEqual([]);
  });
});
