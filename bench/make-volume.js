// Builds a data volume of about `sizeGiB`: ~60% database of snippet text (with its full-text index), ~40% vectors.
// Text is drawn from a word list (it compresses like prose); vectors are random unit vectors (they barely do).
import fs from "node:fs";
import path from "node:path";
import { openVolume } from "../dist/volume/open-volume.js";
import { sqliteDatabaseOf } from "../dist/engine/sqlite/open-databases.js";

const WORDS = Array.from({ length: 6000 }, (_, i) => ((i * 2654435761) % 4294967296).toString(36).slice(0, 3 + (i % 7)));

function paragraph(rand, bytes) {
  const out = [];
  let size = 0;
  while (size < bytes) {
    const word = WORDS[Math.floor(rand() * WORDS.length)];
    out.push(word);
    size += word.length + 1;
  }
  return out.join(" ");
}

function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function makeVolume(root, sizeGiB) {
  const marker = path.join(root, ".bench-size");
  // The marker names the vector layout too, so volumes of an older layout are rebuilt rather than re-embedded.
  const stamp = `${sizeGiB} vectors-layout-2`;
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === stamp) return root;
  fs.rmSync(root, { recursive: true, force: true });
  const volume = await openVolume(root);
  const { vectors } = volume;
  const db = sqliteDatabaseOf(volume.store);
  const rand = mulberry32(42);
  const total = sizeGiB * 1024 ** 3;
  const dbTarget = total * 0.6;
  const vectorCount = Math.floor((total * 0.4) / (vectors.dimensions * 4));

  const libraries = 200;
  const addLibrary = db.prepare("INSERT INTO libraries (id, title, source, state) VALUES (?, ?, 'git', 'finalized')");
  db.transaction(() => {
    for (let i = 0; i < libraries; i++) addLibrary.run(`/bench/lib${i}`, `Library ${i}`);
  })();
  const addSnippet = db.prepare("INSERT INTO snippets (library_id, kind, title, content, tokens) VALUES (?, 'info', ?, ?, ?)");
  const pageBytes = () => db.pragma("page_count", { simple: true }) * db.pragma("page_size", { simple: true });
  let snippets = 0;
  while (pageBytes() < dbTarget) {
    db.transaction(() => {
      for (let i = 0; i < 5000; i++, snippets++) {
        const text = paragraph(rand, 1500 + Math.floor(rand() * 1500));
        addSnippet.run(`/bench/lib${snippets % libraries}`, `Snippet ${snippets}`, text, Math.round(text.length / 4));
      }
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
  }
  const batch = [];
  for (let i = 1; i <= vectorCount; i++) {
    const v = new Float32Array(vectors.dimensions);
    let norm = 0;
    for (let j = 0; j < v.length; j++) norm += (v[j] = rand() - 0.5) ** 2;
    norm = Math.sqrt(norm);
    for (let j = 0; j < v.length; j++) v[j] /= norm;
    batch.push({ snippetId: i, partition: `/bench/lib${(i - 1) % libraries}`, vector: v });
    if (batch.length === 5000 || i === vectorCount) {
      vectors.upsert(batch.splice(0));
    }
  }
  // Random vectors stand in for embeddings here (they compress like real ones): the index is complete as it is.
  vectors.markComplete();
  vectors.db.pragma("wal_checkpoint(TRUNCATE)");
  volume.close();
  fs.writeFileSync(marker, stamp);
  return root;
}
