import { Ajv } from "ajv";
import { LdsError } from "../errors.js";

/** The largest file a manifest may declare. */
export const MAX_FILE_BYTES = 2 ** 42;

/** Archive format version this code writes; readers refuse a newer one. See docs/archive-format.md. */
/** 2 (LDS 0.5) adds `canaries`; 1 is still read. */
export const FORMAT_VERSION = 2;
export const FORMAT_NAME = "lds-backup";
export const MANIFEST_PATH = "manifest.json";
/** A manifest larger than this is refused before it is parsed: it cannot be ours (1 MiB holds ~5,000 libraries). */
export const MANIFEST_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The only files an archive may hold besides the manifest, and where each goes. The databases' names are the SQLite
 * engine's (Engine.fileNames), written out here: this module is loaded by threads (archive-bytes-entry.ts) that
 * must not load an engine, and the format fixes them (formats 1 and 2 carry SQLite's files).
 */
export const ARCHIVE_FILES = {
  db: "db/lds.db",
  vectors: "vectors/vectors.db",
  key: "key/secret.key",
} as const;
export type ArchiveFilePath = (typeof ARCHIVE_FILES)[keyof typeof ARCHIVE_FILES];

export interface ManifestLibrary {
  id: string;
  title: string;
  state: string;
  snippets: number;
}

export interface ManifestFile {
  path: ArchiveFilePath;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT_NAME;
  formatVersion: number;
  appVersion: string;
  schemaVersion: number;
  createdAt: string;
  libraries: ManifestLibrary[];
  /** Libraries that were being indexed when the snapshot was taken; restore queues them for re-indexing. */
  partial: string[];
  files: ManifestFile[];
  /** Queries with their best answers at backup time, rerun by a restore drill (format 2; absent in format 1). */
  canaries?: Canary[];
}

export interface Canary {
  libraryId: string;
  query: string;
  /** Snippet ids of the best BM25 answers, best first. */
  top: number[];
}

/** The first check reads only what every format version shares, so a newer format gets "upgrade", not "corrupt". */
const envelopeSchema = {
  type: "object",
  required: ["format", "formatVersion"],
  properties: {
    format: { const: FORMAT_NAME },
    formatVersion: { type: "integer", minimum: 1 },
  },
};

const manifestSchema = {
  type: "object",
  additionalProperties: false,
  required: ["format", "formatVersion", "appVersion", "schemaVersion", "createdAt", "libraries", "partial", "files"],
  properties: {
    format: { const: FORMAT_NAME },
    formatVersion: { enum: [1, FORMAT_VERSION] },
    appVersion: { type: "string", pattern: "^\\d+\\.\\d+\\.\\d+(?:[-+][0-9A-Za-z.+-]{1,64})?$" },
    schemaVersion: { type: "integer", minimum: 0 },
    createdAt: { type: "string", format: "date-time", maxLength: 40 },
    libraries: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["id", "title", "state", "snippets"],
        properties: {
          id: { type: "string", maxLength: 512 },
          title: { type: "string", maxLength: 1024 },
          state: { type: "string", maxLength: 32 },
          snippets: { type: "integer", minimum: 0 },
        },
      },
    },
    partial: { type: "array", items: { type: "string", maxLength: 512 }, uniqueItems: true },
    canaries: {
      type: "array",
      maxItems: 20000,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["libraryId", "query", "top"],
        properties: {
          libraryId: { type: "string", maxLength: 512 },
          query: { type: "string", maxLength: 2048 },
          top: { type: "array", maxItems: 100, items: { type: "integer", minimum: 0 } },
        },
      },
    },
    files: {
      type: "array",
      minItems: 3,
      maxItems: 3,
      uniqueItems: true,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["path", "size", "sha256"],
        properties: {
          path: { enum: Object.values(ARCHIVE_FILES) },
          // 4 TiB: far above any real volume, far below a size whose disk-space check would blame the disk.
          size: { type: "integer", minimum: 0, maximum: MAX_FILE_BYTES },
          sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
        },
      },
    },
  },
};

const ajv = new Ajv({ allErrors: false, formats: { "date-time": (s: string) => !Number.isNaN(Date.parse(s)) } });
const checkEnvelope = ajv.compile(envelopeSchema);
const checkManifest = ajv.compile<Manifest>(manifestSchema);

/** Parse and validate manifest.json from an archive. Everything in it is hostile until this returns. */
export function parseManifest(bytes: Buffer): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw corrupt("manifest.json is not valid JSON");
  }
  if (!checkEnvelope(value)) throw corrupt("manifest.json does not describe an LDS backup");
  const { formatVersion } = value as { formatVersion: number };
  if (formatVersion > FORMAT_VERSION) {
    throw new LdsError("archive_too_new", `The archive uses format version ${formatVersion}; this LDS reads up to ${FORMAT_VERSION}.`, {
      hint: "Upgrade LDS to the release that made the archive (or newer), then run this again.",
    });
  }
  if (!checkManifest(value)) {
    const first = checkManifest.errors?.[0];
    throw corrupt(`manifest.json is invalid at ${first?.instancePath || "/"}: ${first?.message ?? "unknown problem"}`);
  }
  const paths = new Set(value.files.map((f) => f.path));
  if (paths.size !== value.files.length) throw corrupt("manifest.json lists a file twice");
  return value;
}

/** The one archive_corrupt of every reader: what is wrong, and that nothing was changed. */
export function archiveDamaged(what: string, hint = "Nothing was changed. Use another archive, or make a new backup if the data volume is still intact."): LdsError {
  return new LdsError("archive_corrupt", `The archive is damaged: ${what}.`, { hint });
}

const corrupt = (what: string) => archiveDamaged(what);
