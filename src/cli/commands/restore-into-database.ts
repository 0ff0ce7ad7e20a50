import type { PostgresSettings } from "../../config/database-settings.js";
import { restoreIntoRecords } from "../../ops/restore-into-records.js";
import type { RestoreOptions } from "../../ops/restore.js";

/**
 * `lds-restore ARCHIVE --database-url URL`: the archive imported into the PostgreSQL database in place of its live
 * schema (kept under another name), and the report: which database, the way back, what was queued, and the key.
 */
export async function restoreIntoDatabase(options: RestoreOptions, database: PostgresSettings, json: boolean): Promise<number> {
  const result = await restoreIntoRecords({ ...options, engine: database });
  const goBack =
    `ALTER SCHEMA ${result.liveSchema} RENAME TO ${result.previousSchema.replace("pre_restore", "unwanted_restore")}; ALTER SCHEMA ${result.previousSchema} RENAME TO ${result.liveSchema};` +
    (result.key.keptAs ? ` and put ${result.key.keptAs} back as ${result.key.file}` : "");
  if (json) {
    process.stdout.write(
      JSON.stringify({
        ok: true,
        archive: result.archive,
        database: result.database,
        previousSchema: result.previousSchema,
        goBack,
        requeued: result.requeued,
        migrated: result.migrated,
        vectors: result.vectors,
        ...(result.vectorsSkipped ? { vectorsSkipped: result.vectorsSkipped } : {}),
        snippets: result.rows.snippets ?? 0,
        key: result.key,
      }) + "\n",
    );
    return 0;
  }
  const lines = [
    `Restored ${result.database} from ${result.archive} (created ${result.manifest.createdAt}): ${result.rows.snippets ?? 0} snippets, ${result.vectors} vectors.`,
    `The previous live schema is kept as ${result.previousSchema} (nothing was deleted). To go back, with every replica stopped: ${goBack}`,
  ];
  if (result.vectorsSkipped) lines.push(`Vectors not restored: ${result.vectorsSkipped}.`);
  if (result.migrated) lines.push("The archive was of an older release: its copy was migrated to this release's schema before the import.");
  if (result.requeued.length) lines.push(`Queued for re-indexing (partial at backup time): ${result.requeued.join(", ")}`);
  if (result.key.changed) {
    lines.push(`The archive was sealed with another key: ${result.key.file} now holds it${result.key.keptAs ? ` (the previous key is kept as ${result.key.keptAs})` : ""}.`);
    lines.push(`Copy ${result.key.file} to every replica's LDS_SECRET_KEY_FILE before starting it: a replica with the old key is refused at start (key_missing).`);
  } else {
    lines.push(`The key is unchanged (${result.key.file} is the archive's).`);
  }
  lines.push("Start the replicas to serve the restored data.");
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}
