import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLdsError } from "../../src/errors.js";
import { ingestGitRepository } from "../../src/ops/ingest-git.js";
import { resolveIngestTarget } from "../../src/ops/ingest-target.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { fetchRepository } from "../../src/sources/git.js";
import { checkRepositoryUrl, gitLibraryId } from "../../src/sources/git-url.js";
import { runCli } from "../helpers/cli.js";
import { startGitServer } from "../helpers/git-server.js";
import { tempDir } from "../helpers/temp.js";
import { startTlsProxy } from "../helpers/tls-proxy.js";
import { vectorsOf } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

const TOKEN = "ghp_test-token-9f8e7d6c5b4a";
let git: Awaited<ReturnType<typeof startGitServer>>;
beforeAll(async () => {
  git = await startGitServer(TOKEN);
});
afterAll(async () => {
  await git?.close();
});

const DOCS = {
  "README.md": "# Widgets\n\nWidgets render values in small reusable parts, configured by size and colour.\n\n## Install\n\nInstall it first.\n\n```bash\nnpm install widgets\n```\n",
  "docs/usage.md": "# Usage\n\nCreate a widget with a size between one and five.\n\n```js\nnew Widget({ size: 2 })\n```\n",
  "CHANGELOG.md": "# 1.0\n\n```\nnot documentation\n```\n",
};
const policy = () => ({ allowHttpHosts: [new URL(git.base).host], defaultHost: new URL(git.base).host });
/** As `lds ingest git URL` does: the library of that source (created on first use), then the ingestion. */
const ingest = async (volume: OpenVolume, url: string) => ingestGitRepository({ volume, repositoryUrl: url, ...policy(), ...(await resolveIngestTarget(volume, url, policy(), {})) });
const code = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e) => (isLdsError(e) ? e.code : String(e)),
  );

describe("git repositories", () => {
  it("accepts only https (or allow-listed internal http) URLs without credentials, and derives /owner/repo", () => {
    const github = checkRepositoryUrl("https://github.com/acme/widgets.git");
    expect(gitLibraryId(github, {})).toBe("/acme/widgets");
    expect(github.sourceKey).toBe("github.com/acme/widgets");
    // Other hosts keep their name (and nested groups) in the id, so that no host can claim another's library.
    const gitlab = checkRepositoryUrl("https://GitLab.example.com:8443/Group/Sub/Widgets.git");
    expect(gitLibraryId(gitlab, {})).toBe("/gitlab.example.com:8443/Group/Sub/Widgets");
    expect(gitLibraryId(gitlab, { defaultHost: "gitlab.example.com:8443" })).toBe("/Group/Sub/Widgets");
    expect(gitLibraryId(github, { privateTeamId: 3 })).toBe("/~team-3/acme/widgets");
    for (const bad of ["http://github.com/a/b", "https://user:pw@github.com/a/b", "file:///etc/passwd", "https://github.com/only", "ssh://git@host/a/b", "https://github.com/a/b?x=1", "not a url"]) {
      expect(() => checkRepositoryUrl(bad), bad).toThrow(/Repository URL refused/);
    }
    expect(gitLibraryId(checkRepositoryUrl(`${git.base}/acme/widgets.git`, policy()), policy())).toBe("/acme/widgets");
  });

  it("clones a private repository with the token, which never reaches argv, .git/config or an error message", async () => {
    const repo = await git.createRepo("private", "acme", "secret-docs", DOCS);
    const url = checkRepositoryUrl(repo.url, policy()).url;
    expect(await code(fetchRepository({ url, dir: path.join(tempDir(), "a") }))).toBe("repository_auth_failed");
    let wrongMessage = "";
    await fetchRepository({ url, token: "wrong-token-123", dir: path.join(tempDir(), "b") }).catch((e) => (wrongMessage = `${e.message} ${e.hint}`));
    expect(wrongMessage).toMatch(/refused access with the given token/);
    expect(wrongMessage).not.toContain("wrong-token-123");
    // A short token is redacted only where it stands as a token: the reason others read keeps the address whole.
    const closed = new URL("http://127.0.0.1:9/acme/gone.git");
    let unreachable = "";
    await fetchRepository({ url: closed, token: "0", dir: path.join(tempDir(), "d") }).catch((e) => (unreachable = e.message));
    expect(unreachable).toMatch(/^Cannot reach 127\.0\.0\.1:9 \(.*127\.0\.0\.1.*\)\.$/);
    expect(unreachable).toContain("Failed to connect to 127.0.0.1 port 9");
    expect(unreachable).not.toMatch(/127\.\[redacted\]/);

    const dir = path.join(tempDir(), "c");
    const fetched = await fetchRepository({ url, token: TOKEN, dir });
    expect(fetched.branch).toBe("main");
    expect(fetched.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(fs.readFileSync(path.join(dir, ".git/config"), "utf8")).not.toContain(TOKEN);
    expect(fs.readFileSync(path.join(dir, ".git/config"), "utf8")).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));
    expect(git.requests.some((r) => r.authorized)).toBe(true);
    expect(await code(fetchRepository({ url, token: TOKEN, branch: "nope", dir: path.join(tempDir(), "d") }))).toBe("repository_not_found");
  });

  it("indexes a repository, skips an unchanged one, and replaces every snippet and vector when it changes", async () => {
    const repo = await git.createRepo("public", "acme", "widgets", DOCS);
    const root = tempDir();
    const volume = await openVolume(root);
    try {
      const first = await ingest(volume, repo.url);
      expect(first).toMatchObject({ libraryId: "/acme/widgets", branch: "main", unchanged: false });
      const rows = () =>
        dbOf(volume).prepare("SELECT id, kind, title, content FROM snippets WHERE library_id = '/acme/widgets' ORDER BY id").all() as Array<{ id: number; kind: string; title: string; content: string }>;
      expect(
        rows()
          .filter((r) => r.kind === "code")
          .map((r) => r.content),
      ).toEqual(["npm install widgets", "new Widget({ size: 2 })"]);
      expect(rows().some((r) => r.content.includes("not documentation"))).toBe(false);
      expect(first.snippets).toBe(rows().length);
      expect(vectorsOf(volume).count()).toBe(rows().length);
      expect(dbOf(volume).prepare("SELECT state FROM libraries WHERE id = '/acme/widgets'").pluck().get()).toBe("finalized");
      expect(dbOf(volume).prepare("SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH 'widget'").pluck().get()).toBeGreaterThan(0);

      // A re-submission marks the library queued; finding the commit unchanged must finish it, not leave it queued.
      dbOf(volume).prepare("UPDATE libraries SET state = 'queued' WHERE id = '/acme/widgets'").run();
      const again = await ingest(volume, repo.url);
      expect(again).toMatchObject({ unchanged: true, commit: first.commit });
      expect(dbOf(volume).prepare("SELECT state FROM libraries WHERE id = '/acme/widgets'").pluck().get()).toBe("finalized");

      await repo.commit({ "docs/usage.md": "# Usage\n\nWidgets now take a colour as well as a size.\n\n```js\nnew Widget({ size: 2, colour: 'red' })\n```\n", "README.md": null });
      const oldIds = rows().map((r) => r.id);
      const changed = await ingest(volume, repo.url);
      expect(changed.unchanged).toBe(false);
      expect(changed.commit).not.toBe(first.commit);
      // The README is gone and the new prose is too short for an info snippet: exactly one code snippet is left.
      expect(rows().map((r) => r.content)).toEqual(["new Widget({ size: 2, colour: 'red' })"]);
      expect(rows().some((r) => r.content === "npm install widgets")).toBe(false);
      expect(rows().some((r) => oldIds.includes(r.id))).toBe(false);
      expect(vectorsOf(volume).count()).toBe(rows().length);
      for (const id of oldIds) expect(vectorsOf(volume).db.prepare("SELECT count(*) FROM vec_snippets WHERE snippet_id = ?").pluck().get(BigInt(id))).toBe(0);
      expect(fs.readdirSync(path.join(root, "work"))).toEqual([]);
    } finally {
      volume.close();
    }
  });

  it("a repository without documentation fails with no_snippets_found and a refresh never empties a library", async () => {
    const repo = await git.createRepo("public", "acme", "code-only", { "README.md": DOCS["README.md"] });
    const volume = await openVolume(tempDir());
    try {
      await ingest(volume, repo.url);
      const count = () => dbOf(volume).prepare("SELECT count(*) FROM snippets WHERE library_id = '/acme/code-only'").pluck().get();
      const before = count();
      await repo.commit({ "README.md": null, "src/index.ts": "export const x = 1;\n" });
      expect(await code(ingest(volume, repo.url))).toBe("no_snippets_found");
      expect(count()).toBe(before);
      expect(dbOf(volume).prepare("SELECT state_reason FROM libraries WHERE id = '/acme/code-only'").pluck().get()).toMatch(/^no_snippets_found: /);
    } finally {
      volume.close();
    }
  });

  it("records a failed ingestion on the library, with the reason", async () => {
    const repo = await git.createRepo("private", "acme", "locked", DOCS);
    const volume = await openVolume(tempDir());
    try {
      expect(await code(ingest(volume, repo.url))).toBe("repository_auth_failed");
      const library = dbOf(volume).prepare("SELECT state, state_reason FROM libraries WHERE id = '/acme/locked'").get() as { state: string; state_reason: string };
      expect(library.state).toBe("failed");
      expect(library.state_reason).toMatch(/^repository_auth_failed: .*refused access/);
    } finally {
      volume.close();
    }
  });

  it("lds ingest git takes the token from LDS_GIT_TOKEN and reports what it indexed", async () => {
    const repo = await git.createRepo("private", "acme", "cli-docs", DOCS);
    const dataDir = tempDir();
    const host = new URL(git.base).host;
    // Plain http to an internal host is refused with the setting that allows it...
    const http = await runCli("lds", ["ingest", "git", repo.url, "--data-dir", dataDir], { LDS_GIT_TOKEN: TOKEN });
    expect(http.exitCode).toBe(2);
    expect(http.stderr).toMatch(/^Error: Repository URL refused: plain http is accepted only for the internal hosts an operator allows/m);
    expect(http.stderr).toMatch(/^Hint: Use the https:\/\/ clone URL, or allow the internal host \(host:port\) with --allow-http-host or LDS_GIT_ALLOW_HTTP_HOSTS/m);
    // ...which the CLI reads like the server (or --allow-http-host); a host other than the default keeps its name in the id.
    const result = await runCli("lds", ["ingest", "git", repo.url, "--data-dir", dataDir, "--json"], { LDS_GIT_TOKEN: TOKEN, LDS_GIT_ALLOW_HTTP_HOSTS: host });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ libraryId: `/${host}/acme/cli-docs`, unchanged: false });
    const flag = await runCli("lds", ["ingest", "git", repo.url, "--data-dir", dataDir, "--allow-http-host", host, "--json"], { LDS_GIT_TOKEN: TOKEN });
    expect(JSON.parse(flag.stdout)).toMatchObject({ libraryId: `/${host}/acme/cli-docs`, unchanged: true });
    const refused = await runCli("lds", ["ingest", "git", repo.url.replace("http://", "http://x:y@"), "--data-dir", dataDir]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^Error: Repository URL refused: the URL holds credentials/);
  });
});

describe("git hosts behind an internal CA", () => {
  it("lds ingest git trusts the CA named by LDS_GIT_CA_FILE, and only then", async () => {
    const proxy = await startTlsProxy(git.base);
    try {
      const repo = await git.createRepo("public", "acme", "behind-ca", DOCS);
      const url = repo.url.replace(git.base, proxy.base);
      const dataDir = tempDir();
      const untrusted = await runCli("lds", ["ingest", "git", url, "--data-dir", dataDir]);
      expect(untrusted.exitCode, untrusted.stderr).toBe(8);
      expect(untrusted.stderr).toMatch(/^Error: Cannot reach 127\.0\.0\.1:\d+ \(.*(certificate|SSL).*\)/im);
      expect(untrusted.stderr).toMatch(/^Hint: The host's certificate is not trusted here: for an internal CA, set LDS_GIT_CA_FILE/m);
      const trusted = await runCli("lds", ["ingest", "git", url, "--data-dir", dataDir, "--json"], { LDS_GIT_CA_FILE: proxy.caFile });
      expect(trusted.exitCode, trusted.stderr).toBe(0);
      expect(JSON.parse(trusted.stdout)).toMatchObject({ libraryId: `/${new URL(proxy.base).host}/acme/behind-ca`, unchanged: false });
    } finally {
      await proxy.close();
    }
  });
});

describe("pinned versions", () => {
  it("indexes a tag (annotated or lightweight) apart from the current content, and skips it when unchanged", async () => {
    const repo = await git.createRepo("public", "acme", "versioned", DOCS);
    await repo.tag("v1.0");
    await repo.tag("v1.0-light", false);
    await repo.commit({ "docs/new.md": "# New in 2\n\nA page that only the current content has, added after the tags.\n\n```js\nnewThing()\n```\n" });
    const volume = await openVolume(tempDir());
    try {
      const base = { volume, repositoryUrl: repo.url, ...policy(), libraryId: (await resolveIngestTarget(volume, repo.url, policy(), {})).libraryId };
      await ingestGitRepository(base);
      const pinned = await ingestGitRepository({ ...base, branch: "v1.0", version: "v1.0" });
      expect(pinned).toMatchObject({ libraryId: "/acme/versioned", unchanged: false });
      expect((await ingestGitRepository({ ...base, branch: "v1.0-light", version: "v1.0-light" })).commit).toBe(pinned.commit);
      const count = (version: string) => dbOf(volume).prepare("SELECT count(*) FROM snippets WHERE library_id = '/acme/versioned' AND version = ?").pluck().get(version);
      const paths = (version: string) => dbOf(volume).prepare("SELECT DISTINCT source_path FROM snippets WHERE version = ?").pluck().all(version) as string[];
      expect(paths("").some((p) => p.startsWith("docs/new.md"))).toBe(true);
      expect(paths("v1.0").some((p) => p.startsWith("docs/new.md"))).toBe(false);
      expect(count("v1.0")).toBe(count("v1.0-light"));
      expect(dbOf(volume).prepare("SELECT name, ref FROM library_versions ORDER BY name").all()).toEqual([
        { name: "v1.0", ref: "v1.0" },
        { name: "v1.0-light", ref: "v1.0-light" },
      ]);
      // The current content and its state are not touched by a version.
      expect(dbOf(volume).prepare("SELECT state FROM libraries WHERE id = '/acme/versioned'").pluck().get()).toBe("finalized");
      expect((await ingestGitRepository({ ...base, branch: "v1.0", version: "v1.0" })).unchanged).toBe(true);
      // An unchanged current content reports its own snippets, not those of its versions as well.
      const again = await ingestGitRepository(base);
      expect(again.unchanged).toBe(true);
      expect(again.snippets).toBe(count(""));
      expect(await code(ingestGitRepository({ ...base, branch: "v9", version: "v9" }))).toBe("repository_not_found");
      expect(await code(ingestGitRepository({ ...base, branch: "v1.0", version: "../x" }))).toBe("validation_error");
    } finally {
      volume.close();
    }
  });
});
