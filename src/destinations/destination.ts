import type { Readable } from "node:stream";
import { fileTimestamp } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import { action } from "../hints.js";

export interface ArchiveInfo {
  name: string;
  size: number;
  modifiedAt: string;
  /** Where an operator finds it: a path, or an s3:// URL. */
  location: string;
}

/** Where archives are kept. Every driver passes the same conformance suite (test/destinations). */
export interface Destination {
  /** The driver that made it (destinations/registry.ts): "local", "s3", … */
  readonly kind: string;
  /** Human-readable place, for messages: a directory or s3://bucket/prefix. */
  readonly description: string;
  /**
   * Store `body` under `name`. Atomic: until it resolves no reader sees the name, and on failure or abort
   * nothing is left behind. Refuses to replace an existing archive.
   */
  put(name: string, body: Readable, opts?: { signal?: AbortSignal; size?: number }): Promise<ArchiveInfo>;
  /** Stream an archive (or the byte range [start, end], inclusive). Throws `archive_not_found` when missing. */
  get(name: string, opts?: { signal?: AbortSignal; range?: [number, number] }): Promise<Readable>;
  /** Size and time of an archive. Throws `archive_not_found` when missing. */
  stat(name: string): Promise<ArchiveInfo>;
  /** Our archives only (never other files or objects), newest first. */
  list(): AsyncIterable<ArchiveInfo>;
  /** Delete an archive. Idempotent: a missing name is not an error. */
  remove(name: string): Promise<void>;
  /**
   * Remove what writes killed mid-way left behind (temporary files, incomplete multipart uploads), of our archive
   * names only, and return what was removed. The caller holds the volume's backup lock, so none is in progress.
   */
  removeIncomplete(): Promise<string[]>;
  /**
   * Write a small probe object (never an archive name), read it back and delete it: the dashboard's "Test
   * connection". Throws an LdsError whose message names the step that failed.
   */
  probe(): Promise<void>;
}

/** A probe's name: hidden, random, never an archive name, so that a crash between its steps leaves nothing listed. */
export function probeName(): string {
  return `.lds-probe-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

const ARCHIVE_NAME = /^lds-backup-(\d{8}T\d{6}Z)\.tar(\.gz)?(\.age)?$/;

/** `lds-backup-20261121T151441Z.tar[.gz][.age]`: names sort by time; `.age` is an age-encrypted archive. */
export function archiveName(createdAt: Date, gzip: boolean, encrypted = false): string {
  return `lds-backup-${fileTimestamp(createdAt)}.tar${gzip ? ".gz" : ""}${encrypted ? ".age" : ""}`;
}

export function isArchiveName(name: string): boolean {
  return ARCHIVE_NAME.test(name);
}

/** Reject any name that is not one of ours before it reaches a path or an object key. */
export function assertArchiveName(name: string): void {
  if (!isArchiveName(name)) {
    throw new LdsError("validation_error", `"${name.slice(0, 80)}" is not an LDS archive name.`, {
      hint: "Archive names look like lds-backup-20261121T151441Z.tar (or .tar.gz, and .age when encrypted).",
    });
  }
}

export function notFound(name: string, where: string): LdsError {
  return new LdsError("archive_not_found", `No archive ${name} in ${where}.`, {
    hint: `List the archives there (${action("backup.list")}), and check the name.`,
  });
}
