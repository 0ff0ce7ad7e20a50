#!/usr/bin/env node
// Makes fixtures/archives/lds-0.1.0-schema2.tar: an archive as LDS 0.1.0 wrote it (schema version 2, before the
// full-text migration 3), with one finished library, one library caught mid-indexing and one sealed secret.
// The restore tests check that it restores and that the next start migrates it. Run after `npm run build`:
//   node scripts/make-older-archive.mjs [output.tar]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../dist/engine/sqlite/migrate.js";
import { MIGRATIONS } from "../dist/engine/sqlite/migrations.js";
import { loadOrCreateKey } from "../dist/secrets/key-file.js";
import { putSecret } from "../dist/store/sqlite/secrets-table.js";
import { loadVectorExtension } from "../dist/index/sqlite/vector-index.js";
import { createHashingEmbedder } from "../dist/vectors/embedder.js";
import { dataVolume } from "../dist/config/data-volume.js";
import { chooseEngine } from "../dist/engine/choose-engine.js";
import { copyRecordsAndKey, layOutSnapshot } from "../dist/snapshot/snapshot-volume.js";
import { archiveStream, writeManifest } from "../dist/archive/write-archive.js";
import { ARCHIVE_FILES, MANIFEST_PATH } from "../dist/archive/manifest.js";
import { hashFileSync } from "../dist/util/files.js";
import { pipeline } from "node:stream/promises";

const output = path.resolve(process.argv[2] ?? "fixtures/archives/lds-0.1.0-schema2.tar");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "lds-fixture-"));
const volume = dataVolume(root);

const db = new Database(path.join(root, "lds.db"));
db.pragma("journal_mode = WAL");
migrate(db, MIGRATIONS, 2);
const key = loadOrCreateKey(volume.key, false);
putSecret(db, key, "team:1:git-token", "ghp_fixture-token-not-real");
db.prepare("INSERT INTO teams (id, name, plan) VALUES (1, 'fixture-team', 'pro')").run();
const addLibrary = db.prepare("INSERT INTO libraries (id, team_id, title, source, state) VALUES (?, 1, ?, 'git', ?)");
const addSnippet = db.prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES (?, ?, ?, ?)");
addLibrary.run("/acme/widgets", "Widgets", "finalized");
addLibrary.run("/acme/gadgets", "Gadgets", "embedding");
db.prepare("INSERT INTO jobs (library_id, kind, state) VALUES ('/acme/gadgets', 'ingest', 'running')").run();
const texts = [
  ["/acme/widgets", "code", "Create a widget", "const w = new Widget({ size: 3 });"],
  ["/acme/widgets", "info", "Widget sizes", "Widgets come in sizes one to five."],
  ["/acme/gadgets", "info", "Gadget basics", "A gadget holds several widgets."],
];
const embedder = createHashingEmbedder();
// 0.1.0's vector layout (1): one vec0 table without partitions, dimensions in vector_meta.
const vectors = new Database(path.join(root, "vectors.db"));
loadVectorExtension(vectors);
vectors.exec(`CREATE TABLE vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO vector_meta VALUES ('dimensions', '${embedder.dimensions}');
  CREATE VIRTUAL TABLE vec_snippets USING vec0(snippet_id INTEGER PRIMARY KEY, embedding float[${embedder.dimensions}] distance_metric=cosine);`);
const embedded = await embedder.embed(texts.map((t) => `${t[2]} ${t[3]}`));
texts.forEach((t, i) => {
  const id = Number(addSnippet.run(...t).lastInsertRowid);
  vectors.prepare("INSERT INTO vec_snippets (snippet_id, embedding) VALUES (?, ?)").run(BigInt(id), Buffer.from(embedded[i].buffer));
});
vectors.close();
db.close();

// Today's online snapshot copies the databases; describing the copy is done here, as 0.1.0 did: the engine's own
// description reads today's schema (snippet batches), which a schema 2 database does not have.
const staging = fs.mkdtempSync(path.join(root, "backup-staging-"));
await layOutSnapshot(volume, staging);
await chooseEngine(volume).snapshotVectors(volume, path.join(staging, ARCHIVE_FILES.vectors), { yieldToRequests: false, onPinned: () => {} });
await copyRecordsAndKey(volume, staging);
const copy = new Database(path.join(staging, ARCHIVE_FILES.db), { readonly: true });
const libraries = copy.prepare("SELECT l.id, l.title, l.state, (SELECT count(*) FROM snippets s WHERE s.library_id = l.id) AS snippets FROM libraries l ORDER BY l.id").all();
const partial = copy.prepare("SELECT id FROM libraries WHERE state IN ('fetching','parsing','embedding') UNION SELECT library_id FROM jobs WHERE state = 'running' ORDER BY 1").pluck().all();
copy.close();
// The manifest lists each staged file with its size and hash, in archive order (as ops/backup.ts writes it).
const files = Object.values(ARCHIVE_FILES).map((rel) => ({ path: rel, ...hashFileSync(path.join(staging, rel)) }));
const manifest = await writeManifest({ dir: staging, schemaVersion: 2, libraries, partial, canaries: [] }, new Date("2026-10-01T12:00:00Z"), files, "0.1.0");
// 0.1.0 wrote format 1, which has no canaries (a restore drill of such an archive has none to rerun).
const { canaries: _none, ...format1 } = { ...manifest, formatVersion: 1 };
fs.writeFileSync(path.join(staging, MANIFEST_PATH), JSON.stringify(format1, null, 2) + "\n", { mode: 0o600 });
fs.mkdirSync(path.dirname(output), { recursive: true });
await pipeline(archiveStream(staging, false), fs.createWriteStream(output, { mode: 0o600 }));
fs.rmSync(root, { recursive: true, force: true });
console.log(`wrote ${output}`);
