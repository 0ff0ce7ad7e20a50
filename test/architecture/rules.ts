/**
 * The architecture of src/ as data (docs/architecture.md draws it). Paths are relative to src/: "store/" is a
 * folder and everything below it, "server/api-types.ts" one file. Each rule says why it exists; a known
 * violation goes to baseline.json, never into a rule as an exemption.
 */

/** Top to bottom: a file may import its own layer (one way: see "no-folder-circle") and any layer below. */
export const LAYERS: Array<{ name: string; members: string[] }> = [
  { name: "shells", members: ["cli", "server", "ui"] },
  { name: "use cases", members: ["ops"] },
  { name: "domain", members: ["search", "indexing", "archive", "snapshot", "destinations", "sources", "oauth", "admin", "licence"] },
  { name: "volume", members: ["volume", "engine", "locks"] },
  { name: "storage", members: ["store", "index", "vectors", "text", "config", "secrets"] },
  { name: "base", members: ["util", "errors.ts", "hints.ts", "version.ts"] },
];

export type Rule =
  | { kind: "layer-known"; id: string; reason: string }
  | { kind: "no-upward-import"; id: string; reason: string }
  | { kind: "no-folder-circle"; id: string; reason: string }
  | { kind: "resolvable"; id: string; reason: string }
  /** Only files under `allowedIn` depend on `packages`, type-only imports included. */
  | { kind: "packages-only-in"; id: string; reason: string; packages: string[]; allowedIn: string[] }
  /** Outside `owner` (and `allowedFrom`), value (not type-only) dependencies on files under `owner` go only to `contract`. */
  | { kind: "contract-only"; id: string; reason: string; owner: string; contract: string[]; allowedFrom?: string[] }
  /** Files under `folder` depend only on files under it, and type-only on `typeOnlyAllowed`; nothing else depends on it. */
  | { kind: "apart"; id: string; reason: string; folder: string; typeOnlyAllowed: string[] }
  /** Every dependency of these files is type-only. */
  | { kind: "types-only"; id: string; reason: string; files: string[] }
  /** SQL naming a table created in `tablesFrom` appears only in string literals under `allowedIn` (any case). */
  | { kind: "sql-only-in"; id: string; reason: string; tablesFrom: string; allowedIn: string[] }
  /** String literals matching one of `patterns` (regular expressions, any case) appear only under `allowedIn`. */
  | { kind: "strings-only-in"; id: string; reason: string; patterns: Array<{ name: string; pattern: string }>; allowedIn: string[] }
  /** `process.env` is read or written only under `allowedIn`. */
  | { kind: "env-only-in"; id: string; reason: string; allowedIn: string[] };

/**
 * The SQLite engine, as folders: the records' implementation, the search index's, and the engine work (open,
 * migrate, snapshot, check, prepare, rotate). A second engine is another such list (store/postgres/, …).
 */
export const SQLITE_ENGINE = ["store/sqlite/", "index/sqlite/", "engine/sqlite/"];

/** The PostgreSQL engine, as folders: the records' implementation (issue 34) and its engine work (records copied to and from an archive's SQLite file, schema swaps). */
export const POSTGRES_ENGINE = ["store/postgres/", "engine/postgres/"];

export const RULES: Rule[] = [
  { kind: "layer-known", id: "layer-known", reason: "A file outside every layer has no place in the picture; add its folder to LAYERS and to docs/architecture.md." },
  { kind: "no-upward-import", id: "no-upward-import", reason: "Dependencies point down: a lower layer importing a higher one ties the parts a second engine or shell reuses to one caller." },
  { kind: "no-folder-circle", id: "no-folder-circle", reason: "Folders that reach each other through any chain cannot be understood, tested or replaced one at a time." },
  { kind: "resolvable", id: "resolvable", reason: "A dependency the compiler cannot resolve (or a computed import()) cannot be checked." },
  {
    kind: "packages-only-in",
    id: "sqlite-engine-only",
    reason: "Only the SQLite engine knows SQLite: everything else speaks the store's contract, so a second engine (PostgreSQL) replaces one part.",
    packages: ["better-sqlite3", "sqlite-vec"],
    allowedIn: SQLITE_ENGINE,
  },
  {
    kind: "packages-only-in",
    id: "postgres-engine-only",
    reason: "Only the PostgreSQL engine knows PostgreSQL's driver: everything else speaks the contracts, whichever engine serves them.",
    packages: ["pg", "pg-copy-streams"],
    allowedIn: POSTGRES_ENGINE,
  },
  {
    kind: "contract-only",
    id: "store-contract-only",
    reason: "Records are reached through the Store contract (store/store.ts); a value import of another store module binds the caller to the SQLite engine.",
    owner: "store/",
    contract: ["store/store.ts", "store/records.ts", "store/record-values.ts"],
    // The SQLite engine's other parts may reach its records' modules: its index reads lds.db's batch tables (FTS5
    // lives in lds.db), and its engine work opens lds.db and binds the Store to it. The PostgreSQL engine's work
    // opens its store (store/postgres/) the same way, its backups and restores (into an archive's SQLite file, into a
    // new schema) reach its records' pool, migrations and schema, and its search follower the vectors' bytes, as the
    // SQLite engine's work reaches lds.db's.
    allowedFrom: ["engine/sqlite/", "index/sqlite/", "engine/postgres/"],
  },
  {
    kind: "contract-only",
    id: "index-contract-only",
    reason: "The search index is reached through its contract (index/search-index.ts); its SQLite machinery is bound in by the engine only.",
    owner: "index/",
    contract: ["index/search-index.ts", "index/query-terms.ts"],
    allowedFrom: ["engine/sqlite/"],
  },
  {
    kind: "contract-only",
    id: "engine-contract-only",
    reason: "Engine work (opening, snapshots, archive checks, restore preparation, key rotation) is asked for by intent through engine/engine.ts; the engine is chosen once (engine/choose-engine.ts).",
    owner: "engine/",
    contract: ["engine/engine.ts", "engine/choose-engine.ts"],
  },
  {
    kind: "sql-only-in",
    id: "sql-only-in-store",
    reason: "SQL against the records' tables is an engine's (SQLite's or PostgreSQL's); elsewhere it bypasses the contract (tables read from the migrations, so a new table is covered).",
    tablesFrom: "engine/sqlite/migrations.ts",
    allowedIn: [...SQLITE_ENGINE, ...POSTGRES_ENGINE],
  },
  {
    kind: "strings-only-in",
    id: "sqlite-names-only-in-engine",
    reason: "A PRAGMA, FTS5, vec0 or a .db file named outside the SQLite engine is SQLite knowledge a second engine would not share.",
    patterns: [
      { name: "PRAGMA", pattern: "\\bpragma\\b" },
      { name: "FTS5", pattern: "\\bfts5" },
      { name: "vec0", pattern: "\\bvec0\\b" },
      { name: "a .db file", pattern: "\\w\\.db\\b" },
    ],
    allowedIn: SQLITE_ENGINE,
  },
  {
    kind: "apart",
    id: "ui-apart",
    reason: "src/ui is compiled for the browser and reaches the server through the admin API only: it may take the API's response types (type-only, erased), nothing that runs.",
    folder: "ui/",
    typeOnlyAllowed: ["server/api-types.ts"],
  },
  {
    kind: "types-only",
    id: "api-types-types-only",
    reason: "The API's response types are read by the browser's build: the module holds types and imports types only.",
    files: ["server/api-types.ts"],
  },
  {
    kind: "env-only-in",
    id: "env-only-in-shells",
    reason: "The shells read the environment once and pass parsed settings down, so what runs below them depends on its arguments only.",
    allowedIn: ["cli/", "server/"],
  },
];

/** "store/" matches the folder and everything below it; "server/api-types.ts" matches that file. */
export const matches = (pattern: string, file: string) => (pattern.endsWith("/") ? file.startsWith(pattern) : file === pattern);
export const matchesAny = (patterns: string[], file: string) => patterns.some((p) => matches(p, file));
