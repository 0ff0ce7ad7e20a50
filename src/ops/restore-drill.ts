import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ArchiveKeys } from "../archive/age.js";
import type { Manifest } from "../archive/manifest.js";
import type { Destination } from "../destinations/destination.js";
import { archiveDamaged } from "../archive/manifest.js";
import { unseal } from "../secrets/seal.js";
import { openVolume } from "../volume/open-volume.js";
import { restore } from "./restore.js";

/** The temporary volumes of drills are named so: what a crash leaves can be found and removed. */
export const DRILL_PREFIX = "lds-drill-";

export interface DrillResult {
  archive: string;
  manifest: Manifest;
  checks: Array<{ part: string; ok: true; detail: string }>;
  durationMs: number;
}

/**
 * A restore drill (`lds verify --restore-test`): the archive is restored into a temporary volume with the same code
 * as `lds-restore` (every checksum and both databases' integrity checked there), opened as the server opens it
 * (migrations run on that copy, the key must match), then compared with what the manifest recorded at backup
 * time: the full-text index, snippets per library, the vector index, every sealed secret, and the canary
 * queries' answers. The first difference is an `archive_corrupt` naming it. The temporary volume is removed in
 * every case; the live volume is never touched.
 */
export async function restoreDrill(archive: string, options: { remote?: { destination: Destination; name: string }; keys?: ArchiveKeys; tempDir?: string; signal?: AbortSignal } = {}): Promise<DrillResult> {
  const started = Date.now();
  const work = fs.mkdtempSync(path.join(options.tempDir ?? os.tmpdir(), DRILL_PREFIX));
  try {
    const restored = await restore({ dataDir: work, archive, download: options.remote, keys: options.keys, signal: options.signal, confirm: async () => true });
    const { manifest } = restored;
    const checks: DrillResult["checks"] = [{ part: "restore", ok: true, detail: `restored into a temporary volume as lds-restore would (${manifest.files.length} files, checksums and integrity verified)` }];
    // Always SQLite, whatever engine serves the live records: an archive carries SQLite's files (formats 1 and 2).
    const volume = await openVolume(work);
    try {
      checks.push({ part: "open", ok: true, detail: "opened as the server opens it: migrations applied, the key is the one the database was sealed with" });
      const { key } = volume;
      const restoredView = volume.engine.restoredView(volume);
      try {
        await restoredView.checkFullTextIndex();
      } catch (err) {
        throw drillFailed(`the full-text index disagrees with the snippets (${(err as Error).message})`);
      }
      checks.push({ part: "full-text index", ok: true, detail: `${volume.engine.fullTextIndexName} integrity-check passed` });

      const counts = await restoredView.snippetCounts();
      for (const library of manifest.libraries) {
        const found = counts.get(library.id) ?? 0;
        if (found !== library.snippets) throw drillFailed(`${library.id} holds ${found} snippets, the manifest recorded ${library.snippets} at backup time`);
      }
      checks.push({ part: "snippets per library", ok: true, detail: `${manifest.libraries.length} libraries hold what the manifest recorded` });

      if (!volume.index.stale) {
        // Every snippet a reader can be served has its vector. Batches being written or deleted (schema 11) and
        // libraries being indexed at backup time may differ between the two copies by design: not compared.
        let served = 0;
        for await (const ids of restoredView.servedSnippetIdPages(new Set(manifest.partial))) {
          const lacking = await volume.index.firstWithoutVector(ids);
          if (lacking !== undefined) throw drillFailed(`snippet ${lacking} has no vector in the vector index`);
          served += ids.length;
        }
        checks.push({ part: "vector index", ok: true, detail: `each of the ${served} served snippets has its vector (${(await volume.index.statistics()).vectors} vectors in all)` });
      } else {
        checks.push({ part: "vector index", ok: true, detail: "from another embedder or layout: rebuilt from the snippets at the first start (not compared)" });
      }

      const secrets = await restoredView.sealedSecrets();
      for (const secret of secrets) {
        try {
          unseal(key, secret.sealed, secret.name);
        } catch {
          throw drillFailed(`the stored secret ${secret.name} does not unseal with the archive's key`);
        }
      }
      checks.push({ part: "sealed secrets", ok: true, detail: `${secrets.length} unseal with the archive's key` });

      const canaries = manifest.canaries ?? [];
      for (const canary of canaries) {
        const now = (await restoredView.canaryAnswer(canary.libraryId, canary.query)) ?? [];
        if (now.join(",") !== canary.top.join(",")) {
          throw drillFailed(`the canary query "${canary.query.slice(0, 80)}" of ${canary.libraryId} answers snippets ${now.join(", ") || "none"}, at backup time ${canary.top.join(", ") || "none"}`);
        }
      }
      checks.push({ part: "canary queries", ok: true, detail: manifest.canaries ? `${canaries.length} answer as at backup time` : "none recorded (an archive of format 1)" });
    } finally {
      volume.close();
    }
    return { archive, manifest, checks, durationMs: Date.now() - started };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function drillFailed(what: string) {
  return archiveDamaged(`the restore drill found that ${what}`, "The archive's checksums hold, but what it restores is not what was backed up: use another archive, and keep this one for investigation.");
}
