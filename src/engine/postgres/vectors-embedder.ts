import type { Sql } from "../../store/postgres/sql.js";
import { getSetting, putSettingIfAbsent } from "../../store/postgres/settings.js";

/**
 * Which embedder made the vectors in snippet_vectors, recorded in the database's settings (PostgreSQL keeps no
 * vector index whose meta would say it, as a SQLite volume's vectors.db does): the first server to open the database
 * records its configured embedder, a backup labels the archive's vectors from this record (never from the backing-up
 * command's environment, which cron seldom gives the server's LDS_EMBEDDINGS_*), and a restore imports an archive's
 * vectors only when they are this embedder's.
 */
export const VECTORS_EMBEDDER_SETTING = "vectors.embedder";

/** The label of an archive's vectors when the database recorded no maker: no embedder has it, so nothing trusts them. */
export const UNKNOWN_VECTORS_EMBEDDER = "unknown (PostgreSQL backup)";

export interface VectorsEmbedder {
  id: string;
  dimensions: number;
}

export const sameEmbedder = (a: VectorsEmbedder, b: VectorsEmbedder): boolean => a.id === b.id && a.dimensions === b.dimensions;

/** The recorded embedder; undefined when none is recorded (or the record is unreadable: then nothing is trusted). */
export function parseVectorsEmbedder(value: string | undefined): VectorsEmbedder | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<VectorsEmbedder>;
    if (typeof parsed.id === "string" && Number.isInteger(parsed.dimensions) && parsed.dimensions! > 0) return { id: parsed.id, dimensions: parsed.dimensions! };
  } catch {
    // A record no release writes: as if none.
  }
  return undefined;
}

export const vectorsEmbedderValue = (embedder: VectorsEmbedder): string => JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions });

/** The embedder the schema `sql` reads from records (a schema without a settings table yet records none). */
export async function recordedVectorsEmbedder(sql: Sql): Promise<VectorsEmbedder | undefined> {
  const made = await sql.row<{ made: string | null }>("SELECT to_regclass('settings')::text AS made");
  if (!made?.made) return undefined;
  return parseVectorsEmbedder(await getSetting(sql, VECTORS_EMBEDDER_SETTING));
}

/** Record `embedder` unless one is recorded already; answers the one recorded (of two replicas at once, the first's). */
export async function recordVectorsEmbedder(sql: Sql, embedder: VectorsEmbedder): Promise<VectorsEmbedder | undefined> {
  return parseVectorsEmbedder(await putSettingIfAbsent(sql, VECTORS_EMBEDDER_SETTING, vectorsEmbedderValue(embedder)));
}
