import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkArchitecture, keyOf, type BaselineEntry } from "./check.js";

/**
 * The architecture check, proved on small planted trees: each way an import can be written (and each rule it can
 * break) is caught, and what only looks like an import is not. The rules and layers are the real ones (rules.ts).
 */

/** A tree that breaks no rule: every layer used the right way round. */
const CLEAN: Record<string, string> = {
  "engine/sqlite/migrations.ts": `export const M = ["CREATE TABLE libraries (id TEXT)", "create virtual table if not exists jobs using fts5(x)"];`,
  "store/store.ts": `export interface Store { count(): Promise<number> }`,
  "store/sqlite/engine.ts": `import Database from "better-sqlite3";\nexport const open = (file: string) => new Database(file).prepare("SELECT count(*) FROM libraries");`,
  "util/log.ts": `export const log = (s: string) => s;`,
  "ops/run.ts": `import { log } from "../util/log.js";\nimport type { Store } from "../store/store.js";\nexport const run = async (s: Store) => log(String(await s.count()));`,
  "cli/main.ts": `import { run } from "../ops/run.js";\nexport const home = process.env.HOME;\nexport { run };`,
  "ui/app.tsx": `import { log } from "./log.js";\nexport const App = () => <p>{log("x")}</p>;`,
  "ui/log.ts": `export const log = (s: string) => s;`,
};

const trees: string[] = [];
afterAll(() => trees.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** Writes CLEAN plus `files` into a fresh src/ under the temporary directory and checks it. */
function plant(files: Record<string, string>, baseline: BaselineEntry[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lds-architecture-"));
  trees.push(dir);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
  for (const [file, text] of Object.entries({ ...CLEAN, ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, "src", file)), { recursive: true });
    fs.writeFileSync(path.join(dir, "src", file), text);
  }
  return checkArchitecture(path.join(dir, "src"), { baseline });
}
const found = (files: Record<string, string>) => plant(files).violations.map(keyOf).sort();

describe("the architecture check", () => {
  it("passes a tree that follows every rule", () => {
    expect(found({})).toEqual([]);
  });

  it("catches an upward import however it is written", () => {
    expect(
      found({
        "config/single.ts": `import { run } from '../ops/run.js';\nexport { run };`,
        "config/star.ts": `import * as ops from "../ops/run.js";\nexport { ops };`,
        "config/reexport.ts": `export { run } from "../ops/run.js";`,
        "config/reexport-all.ts": `export * from "../ops/run.js";`,
        "config/dynamic.ts": `export async function load() { return await import("../ops/run.js"); }`,
        "config/equals.ts": `import ops = require("../ops/run.js");\nexport { ops };`,
        "config/typeof.ts": `export type Run = typeof import("../ops/run.js");`,
        "config/type-only.ts": `import type { run } from "../ops/run.js";\nexport type Run = typeof run;`,
      }),
    ).toEqual([
      "no-upward-import | config/dynamic.ts | dynamic-import of ops/run.ts",
      "no-upward-import | config/equals.ts | import-equals of ops/run.ts",
      "no-upward-import | config/reexport-all.ts | export of ops/run.ts",
      "no-upward-import | config/reexport.ts | export of ops/run.ts",
      "no-upward-import | config/single.ts | import of ops/run.ts",
      "no-upward-import | config/star.ts | import of ops/run.ts",
      "no-upward-import | config/type-only.ts | import of ops/run.ts",
      "no-upward-import | config/typeof.ts | import-type of ops/run.ts",
    ]);
  });

  it("follows a worker's entry given as a URL, through a helper, or as a path", () => {
    const worker = `import { Worker } from "node:worker_threads";\n`;
    expect(
      found({
        "config/url.ts": `${worker}export const start = () => new Worker(new URL("../ops/run.js", import.meta.url));`,
        "config/helper.ts": `${worker}const entry = (base: string, rel: string) => new URL(rel, base);\nconst ENTRY = entry(import.meta.url, "../ops/run.js");\nexport const start = () => new Worker(ENTRY);`,
        "config/path.ts": `${worker}export const start = () => new Worker("../ops/run.js");`,
      }),
    ).toEqual(["no-upward-import | config/helper.ts | module-url of ops/run.ts", "no-upward-import | config/path.ts | worker of ops/run.ts", "no-upward-import | config/url.ts | module-url of ops/run.ts"]);
  });

  it("finds a circle through three folders of one layer", () => {
    expect(
      found({
        "store/a.ts": `import { b } from "../index/search-index.js";\nexport const a = () => b();`,
        "index/search-index.ts": `import { c } from "../vectors/c.js";\nexport const b = () => c();`,
        "vectors/c.ts": `import type { a } from "../store/a.js";\nexport const c = (): ReturnType<typeof a> | 0 => 0;`,
      }),
    ).toEqual(["no-folder-circle | index ↔ store ↔ vectors | index → vectors (index/search-index.ts) → store (vectors/c.ts) → index (store/a.ts)"]);
  });

  it("finds SQL against lds.db's tables outside store/ in any case, in strings and templates", () => {
    expect(
      found({
        "ops/lower.ts": `export const q = "select id from libraries where id = ?";`,
        "ops/template.ts": "export const q = (n: number) => `DELETE FROM  Jobs WHERE id = ${n}`;",
        "ops/prose.ts": `// SELECT * FROM libraries, in a comment, is no statement\nexport const words = "from the libraries";`,
      }),
    ).toEqual(['sql-only-in-store | ops/lower.ts | SQL "from libraries"', 'sql-only-in-store | ops/template.ts | SQL "from jobs"']);
  });

  it("allows better-sqlite3 only in the SQLite engine, type-only imports included", () => {
    expect(
      found({
        "volume/db.ts": `import type Database from "better-sqlite3";\nexport type Db = Database.Database;`,
        "ops/vec.ts": `export const load = () => import("sqlite-vec");`,
      }),
    ).toEqual(["sqlite-engine-only | ops/vec.ts | dynamic-import of sqlite-vec", "sqlite-engine-only | volume/db.ts | import of better-sqlite3"]);
  });

  it("allows pg and pg-copy-streams only in the PostgreSQL engine, which may also name the records' tables", () => {
    expect(
      found({
        "store/postgres/pool.ts": `import pg from "pg";\nexport const count = (p: pg.Pool) => p.query("SELECT count(*) FROM libraries");`,
        "engine/postgres/copy.ts": `import { to } from "pg-copy-streams";\nexport const out = () => to("COPY jobs TO STDOUT");`,
        "ops/pool.ts": `import type pg from "pg";\nexport type Pool = pg.Pool;`,
        "volume/copy.ts": `export const load = () => import("pg-copy-streams");`,
      }),
    ).toEqual(["postgres-engine-only | ops/pool.ts | import of pg", "postgres-engine-only | volume/copy.ts | dynamic-import of pg-copy-streams"]);
  });

  it("finds SQLite's names (PRAGMA, FTS5, vec0, a .db file) outside the engine, in strings only", () => {
    expect(
      found({
        "store/sqlite/pragmas.ts": `export const wal = "PRAGMA journal_mode = WAL";`,
        "ops/pragma.ts": `export const q = "pragma integrity_check";`,
        "ops/file.ts": "export const file = (dir: string) => `${dir}/lds.db`;",
        "vectors/vec.ts": `// CREATE VIRTUAL TABLE v USING vec0 (a comment)\nexport const v = ["USING vec0(x float[3])", "fts5 and more"];`,
        "ops/words.ts": `export const w = "a .db is not named, database is no .dbx";`,
      }),
    ).toEqual([
      "sqlite-names-only-in-engine | ops/file.ts | names a .db file",
      "sqlite-names-only-in-engine | ops/pragma.ts | names PRAGMA",
      "sqlite-names-only-in-engine | vectors/vec.ts | names FTS5",
      "sqlite-names-only-in-engine | vectors/vec.ts | names vec0",
    ]);
  });

  it("allows only type-only imports of the store's modules other than its contract", () => {
    expect(
      found({
        "ops/types.ts": `import { type open } from "../store/sqlite/engine.js";\nexport type Open = typeof open;`,
        "ops/value.ts": `import { open } from "../store/sqlite/engine.js";\nexport const o = open;`,
      }),
    ).toEqual(["store-contract-only | ops/value.ts | value import of store/sqlite/engine.ts"]);
  });

  it("finds process.env below the shells, however it is reached", () => {
    expect(
      found({
        "config/read.ts": `export const dir = process.env.LDS_DATA_DIR;`,
        "config/write.ts": `process.env["AWS_X"] ??= "1";`,
        "util/destructure.ts": `const { env } = process;\nexport const x = env.X;`,
        "util/named.ts": `// process.env.X in a comment\nexport const text = "process.env.X";\nexport type Env = NodeJS.ProcessEnv;`,
      }),
    ).toEqual(["env-only-in-shells | config/read.ts | process.env", "env-only-in-shells | config/write.ts | process.env", "env-only-in-shells | util/destructure.ts | process.env"]);
  });

  it("keeps ui/ apart: only type-only imports of the API's types, whether or not that module exists", () => {
    const apiTypes = { "server/api-types.ts": `import type { Store } from "../store/store.js";\nexport interface Library { id: string; store?: Store }` };
    expect(found({ ...apiTypes, "ui/page.tsx": `import type { Library } from "../server/api-types.js";\nexport const Page = (p: { l: Library }) => <p>{p.l.id}</p>;` })).toEqual([]);
    expect(
      found({
        ...apiTypes,
        "ui/value.ts": `import { type Library } from "../server/api-types.js";\nimport "../server/api-types.js";\nexport type L = Library;`,
        "ui/other.ts": `import type { Store } from "../store/store.js";\nexport type S = Store;`,
        "server/page.ts": `import { App } from "../ui/app.js";\nexport { App };`,
      }),
    ).toEqual([
      "no-folder-circle | server ↔ ui | server → ui (server/page.ts) → server (ui/value.ts)",
      "ui-apart | server/page.ts | import of ui/app.tsx",
      "ui-apart | ui/other.ts | type-only import of store/store.ts",
      "ui-apart | ui/value.ts | value import of server/api-types.ts",
    ]);
    expect(found({ "server/api-types.ts": `import { log } from "../util/log.js";\nexport type L = ReturnType<typeof log>;` })).toEqual([
      "api-types-types-only | server/api-types.ts | value import of ../util/log.js",
    ]);
  });

  it("does not read an import in a comment or a string as one", () => {
    expect(
      found({
        "util/quiet.ts": [
          `// import { run } from "../ops/run.js";`,
          `/* export * from "../ops/run.js"; await import("../ops/run.js") */`,
          `export const text = 'import { run } from "../ops/run.js"';`,
          'export const template = `new Worker(new URL("../ops/run.js", import.meta.url))`;',
        ].join("\n"),
      }),
    ).toEqual([]);
  });

  it("reports a file outside every layer, an import that does not resolve and a computed import()", () => {
    expect(
      found({
        "plugins/x.ts": `export const x = 1;`,
        "util/missing.ts": `export { y } from "./nowhere.js";`,
        "util/computed.ts": `export const load = (name: string) => import(name);`,
      }),
    ).toEqual([
      "layer-known | plugins/x.ts | folder plugins is in no layer",
      "resolvable | util/computed.ts | dynamic-import with a computed specifier",
      "resolvable | util/missing.ts | export of ./nowhere.js (unresolved)",
    ]);
  });

  it("fails on a violation not in the baseline and on a baseline entry that no longer occurs", () => {
    const known = { rule: "env-only-in-shells", where: "config/read.ts", detail: "process.env", note: "planted" };
    const gone = { rule: "env-only-in-shells", where: "config/gone.ts", detail: "process.env", note: "fixed since" };
    const result = plant({ "config/read.ts": `export const a = process.env.A;`, "config/new.ts": `export const b = process.env.B;` }, [known, gone]);
    expect(result.added.map(keyOf)).toEqual(["env-only-in-shells | config/new.ts | process.env"]);
    expect(result.stale).toEqual([gone]);
  });
});
