import type { DataVolume } from "../config/data-volume.js";
import type { LdsError } from "../errors.js";
import type { SearchIndex } from "../index/search-index.js";
import type { Store } from "../store/store.js";
import type { HeldLock } from "../locks/lock-file.js";
import type { BackupLockPurpose } from "../locks/volume-locks.js";
import type { Embedder } from "../vectors/embedder.js";

/**
 * Engine work, asked for by intent: everything a data volume's databases need besides their records (the `Store`)
 * and their search index. The SQLite engine (engine/sqlite/) is today's only one; a second engine (PostgreSQL over
 * the network) implements the same interface, so every operation that would wait on a network answers a Promise.
 * Chosen once per volume, from its parsed settings (engine/choose-engine.ts).
 */
export interface Engine {
  /** The name a volume's settings choose it by ("sqlite", "postgres"). */
  readonly name: string;
  /** The name operators know it by, in messages ("SQLite", "PostgreSQL"). */
  readonly title: string;
  /**
   * The engine_unsupported error for `command` when this engine cannot do `work` yet (PostgreSQL while issue 34 is
   * under way), naming what to use instead; undefined when it can. A command asks before it takes or opens anything
   * (`requireEngineWork` in engine/choose-engine.ts).
   */
  notYet(work: EngineWork, command: string): LdsError | undefined;
  /** The newest schema this engine's migrations reach: an archive of a newer one cannot be restored here. */
  readonly latestSchemaVersion: number;
  /**
   * Several servers (replicas) share the records (PostgreSQL): none is their sole writer, so a server runs jobs under
   * leases, retires only abandoned batches, and writes an ingestion inline (no writer thread: each replica's search
   * files are filled from the records, not by the writer). False for SQLite: one server per volume, under its lock.
   */
  readonly sharedByReplicas: boolean;

  /**
   * The names of the volume's database files ("lds.db", "vectors.db"): an archive carries them under these names, in
   * its db/ and vectors/ folders (archive/manifest.ts).
   */
  readonly fileNames: VolumeDatabases;
  /** The volume's database files (the records' and the vector index's), for what handles them as files. */
  files(volume: DataVolume): VolumeDatabases;
  /**
   * Every live file a restore replaces, the engine's side files included (their loss would drop committed data),
   * and the key.
   */
  liveFiles(volume: DataVolume): string[];

  /**
   * Open and migrate the volume's databases, finish an interrupted key rotation, load (or create) the key and check
   * that it is the one they were sealed with (key_missing if not).
   */
  open(volume: DataVolume, options: OpenOptions): Promise<OpenedDatabases>;
  /**
   * Connections of their own to a volume this process has already opened (and migrated), for a thread that writes
   * beside the opener (the snippet writer): no migration, and no checkpoints of their own.
   */
  connect(volume: DataVolume, key: Buffer, embedder: Embedder): Promise<ConnectedDatabases>;

  /**
   * One backup of the records at a time, across processes and, for an engine shared by replicas, across replicas:
   * SQLite's backup.lock file in the data directory; PostgreSQL's session advisory lock on a connection held for the
   * lock's life (freed by the server if the holder dies). Busy: backup_running naming the holder (volume_locked
   * while a restore is staged).
   */
  lockBackups(volume: DataVolume, purpose: BackupLockPurpose): Promise<HeldLock>;
  /**
   * For an engine shared by replicas: whether any process holds the backup lock, found without taking it (a status
   * request that took it would refuse a backup started at that moment). Absent where the status needs no probe.
   */
  backupLockHeld?(volume: DataVolume): Promise<boolean>;

  /** Before a snapshot: the volume is whole (its databases and key exist), else data_dir_invalid. */
  checkWhole(volume: DataVolume): Promise<void>;
  /**
   * The online snapshot's first step, on a thread of its own: copy the vector index to `target` while writers go
   * on, and hash the copy. `onPinned` is called once the copy's state is fixed, before its bytes are copied: the
   * records are copied after it, so that they are the later of the two. An engine that copies both from one
   * state of its database (PostgreSQL's exported snapshot) hands that state to `onPinned`, for snapshotRecords.
   */
  snapshotVectors(volume: DataVolume, target: string, options: SnapshotVectorsOptions): Promise<CopiedFile>;
  /**
   * The online snapshot's second step: copy the records and the key; refuse a key that is not the records'.
   * `pinned`: what snapshotVectors handed to its `onPinned`, the state to copy the records from.
   */
  snapshotRecords(volume: DataVolume, target: { records: string; key: string }, pinned?: string): Promise<void>;
  /** What a manifest says about a copy of the records: schema, libraries, partial ones, canary answers. */
  describeSnapshot(records: string): Promise<SnapshotDescription>;

  /**
   * An archive's copies, extracted: each a usable database (integrity checked), the vector table readable, the key
   * the one the records were sealed with. Damage is an archive_corrupt LdsError naming the copy by its `name`.
   */
  checkArchiveCopies(copies: ArchiveCopies, options: { searchIndexCheckedElsewhere: boolean }): Promise<ArchiveCopiesCheck>;
  /**
   * The longest part of checkArchiveCopies (the records' own full-text index), on a thread of its own, so that it
   * runs while the rest of the archive streams. Aborting stops it (`interrupted`); damage is archive_corrupt.
   */
  checkSearchIndexCopy(records: NamedFile, options: { yieldToRequests: boolean; signal: AbortSignal }): Promise<void>;
  /**
   * Make a restored archive's copies ready to serve before they replace anything, and queue the libraries that were
   * being indexed at snapshot time (`partial`) for re-indexing. Returns those queued. Migrations wait for the next open.
   */
  prepareRestored(copies: VolumeDatabases, partial: string[]): Promise<string[]>;

  /**
   * Engines whose records are not files of the volume (PostgreSQL): restore an archive's verified copies into the
   * records in place of the live ones, while no replica serves, and make the key file hold the archive's key. Absent:
   * a restore replaces the volume's files (liveFiles, prepareRestored).
   */
  restoreIntoRecords?(volume: DataVolume, copies: ArchiveCopies, partial: string[], options?: { lockWaitMs?: number }): Promise<RecordsRestore>;
  /**
   * Engines whose key every replica shares (PostgreSQL): re-seal every secret with a new key in one transaction while
   * no replica serves, and replace the key file crash-safely. `currentKey`: the key file's, already checked against
   * the records (an open). Absent: the volume's own key is rotated in its folder.
   */
  rotateSharedKey?(volume: DataVolume, currentKey: Buffer): Promise<SharedKeyRotation>;

  /** What the full-text index is called in reports ("FTS5"): a drill's report names the check it ran. */
  readonly fullTextIndexName: string;
  /** The restore drill's view of a volume it restored and opened: what it compares with the manifest. */
  restoredView(opened: OpenedDatabases): RestoredVolumeView;
}

/**
 * Kinds of engine work a command may need beyond the records: `search` (the search index: search, context, the
 * server), `ingestion` (writing a library's snippet batches, with their vectors, and publishing them: a command's
 * ingestion, which ranks nothing), `snapshot` (backups), `restore` (restoring an archive into the volume), `keyRotation`.
 */
export type EngineWork = "search" | "ingestion" | "snapshot" | "restore" | "keyRotation";

export interface SnapshotVectorsOptions {
  yieldToRequests: boolean;
  /** The copy's state is fixed; `pinned` is the state snapshotRecords is to copy the records from, if the engine has one. */
  onPinned: (pinned?: string) => void;
  /**
   * Settles once the records' copy has taken the pinned state (or failed): an engine that pins a state by holding it
   * (PostgreSQL's exporting transaction) holds it until then, at most a bounded while. Absent: nothing holds it.
   */
  recordsTaken?: Promise<void>;
}

/** The databases of a volume by what they hold (file paths for a file-based engine). */
export interface VolumeDatabases {
  records: string;
  vectors: string;
}

/** A file, and the name an error or a report gives it (its path in the archive: "db/lds.db"). */
export interface NamedFile {
  file: string;
  name: string;
}

/** An archive's database copies and key, extracted to files. */
export interface ArchiveCopies {
  records: NamedFile;
  vectors: NamedFile;
  key: NamedFile;
}

export interface ArchiveCopiesCheck {
  schemaVersion: number;
  /** One line per copy, for verify's report. */
  details: { records: string; vectors: string; key: string };
}

export interface OpenOptions {
  embedder: Embedder;
  /** Read through a memory map (the server): see engine/sqlite/open-store.ts. */
  mappedReads?: boolean;
  /**
   * Open the search index too (the default). Commands that need only the records say false: an engine whose index
   * is a replica's files followed from the records (PostgreSQL) then starts no follower beside a serving replica.
   */
  search?: boolean;
  /**
   * What the search index is opened for, with `search`: "ranking" (the default: the server, search and context) or
   * "writes" (a command's ingestion, which writes batches and ranks nothing). An engine whose index is a replica's
   * files followed from the records (PostgreSQL) then opens none of them and starts no follower: the batches go into
   * the records, which every replica follows, and its index takes no part (any ranking refuses, naming `command`).
   * SQLite opens its index as for "ranking".
   */
  searchFor?: "ranking" | "writes";
  /** The command that opens the volume, as operators type it ("lds ingest git"): named by refusals and by the locks it holds. */
  command?: string;
  /** A failure of the engine's work in the background (following the records into the search files): logged by the server. */
  onBackgroundError?: (err: Error) => void;
}

/** How far a replica's search files are behind the records (engines whose index follows them): for /api/health and /api/ready. */
export interface SearchLag {
  /** Live batches seen missing here and not held yet. */
  batches: number;
  /** Since the oldest of them was first seen missing; null when none is. */
  oldestMs: number | null;
  /** Whether the replica hears the records' notices now (else it polls). */
  listening: boolean;
  /** False until the first catch-up ended, and again while a lost notice stream is being caught up with (a database restart). */
  caughtUp: boolean;
}

/** What an engine opened: the records, the search index, the key, and the engine's upkeep. */
export interface OpenedDatabases {
  store: Store;
  /** Absent when only the records were asked for (`OpenOptions.search` false) and the engine then opens no index. */
  index?: SearchIndex;
  /** An index that follows the records (PostgreSQL's replicas): how far behind it is. Absent: never behind. */
  searchLag?(): SearchLag;
  key: Buffer;
  /** For the server: the databases' upkeep (SQLite: WAL checkpoints) on a thread of its own. */
  checkpointInThread(onFailure: (err: Error) => void): Checkpointer;
  /** A network engine ends its connections, which takes a round trip: a command awaits it before it exits. */
  close(): void | Promise<void>;
}

export interface ConnectedDatabases {
  store: Store;
  index: SearchIndex;
  close(): void;
}

export interface Checkpointer {
  close(): Promise<void>;
}

/** What restoreIntoRecords did. */
export interface RecordsRestore {
  /** host:port/database (never the user or password). */
  database: string;
  /** The live schema's name (the restored records now have it: normally `public`). */
  liveSchema: string;
  /** The live schema before the restore, kept under this name: the way back. */
  previousSchema: string;
  /** Libraries being indexed at backup time, queued again. */
  requeued: string[];
  /** Snippet vectors copied with the records. */
  vectors: number;
  /** Set when the archive's vectors were not imported (another embedder's, or of unknown making): why. */
  vectorsSkipped?: string;
  rows: Record<string, number>;
  /** Whether the key file now holds another key (the archive's), and where the one it held is kept. */
  key: { changed: boolean; file: string; keptAs: string | null };
}

/** What rotateSharedKey did. */
export interface SharedKeyRotation {
  /** host:port/database. */
  database: string;
  keyFile: string;
  /** Where the previous key is kept (never deleted). */
  oldKeyFile: string;
  resealed: number;
  fingerprint: string;
}

/** A file an engine copied, with its SHA-256 and size. */
export interface CopiedFile {
  file: string;
  sha256: string;
  size: number;
}

/** A library as an archive's manifest lists it. */
export interface SnapshotLibrary {
  id: string;
  title: string;
  state: string;
  snippets: number;
}

/** A query with its best answers at backup time: a restore drill asks it again. */
export interface CanaryAnswer {
  libraryId: string;
  query: string;
  top: number[];
}

export interface SnapshotDescription {
  schemaVersion: number;
  libraries: SnapshotLibrary[];
  /** Libraries being indexed when the snapshot was taken. */
  partial: string[];
  canaries: CanaryAnswer[];
}

export interface RestoredVolumeView {
  /** The full-text index's own consistency check against the snippets; throws when they disagree. */
  checkFullTextIndex(): Promise<void>;
  /** Snippets per library, counted as the manifest counts them. */
  snippetCounts(): Promise<Map<string, number>>;
  /** Ids of the snippets readers see, in pages, leaving out the libraries in `skip`. */
  servedSnippetIdPages(skip: ReadonlySet<string>): AsyncIterable<number[]>;
  /** Every stored secret, sealed, by name. */
  sealedSecrets(): Promise<Array<{ name: string; sealed: string }>>;
  /** A canary's answer now: the best snippet ids, or null for a query with nothing to search for. */
  canaryAnswer(libraryId: string, query: string): Promise<number[] | null>;
}
