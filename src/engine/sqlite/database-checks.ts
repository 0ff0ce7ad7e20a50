import fs from "node:fs";
import Database from "better-sqlite3";
import { readFreePages } from "./free-pages.js";

/** What SQLite's integrity check found wrong in a file that is a database. */
export class IntegrityProblem extends Error {}

/**
 * A check reads each page once, so a big page cache buys nothing (same speed with 2 MiB, measured), while
 * better-sqlite3 builds SQLite with a 16 MiB default per connection: checks on two threads would pay it twice.
 */
const CHECK_CACHE_KIB = 2048;
const PENDING_BYTE_OFFSET = 0x40000000;

export function openForCheck(file: string): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma(`cache_size = -${CHECK_CACHE_KIB}`);
  return db;
}

/**
 * Everything `PRAGMA integrity_check` checks except the virtual tables' own checks (checkVirtualTables), which can
 * then run on another thread.
 *
 * SQLite checks each stored table with its indexes (`integrity_check(table)`), but a per-table check skips the
 * accounting of the file's pages. So that is done here, when the file has no auto-vacuum pointer maps (no LDS
 * database has): every page but the one holding SQLite's lock bytes must belong either to exactly one b-tree
 * (dbstat lists each page of each b-tree) or to the free list (walked like integrity_check walks it, see
 * free-pages.ts), never to both. Any other file gets the whole pragma, virtual tables included.
 */
export function checkStoredTables(db: Database.Database): void {
  if (hasPointerMaps(db)) return expectOk(db.pragma("integrity_check", { simple: true }));
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND rootpage > 0").pluck().all() as string[];
  for (const table of ["sqlite_schema", ...tables]) expectOk(db.pragma(`integrity_check(${quoted(table)})`, { simple: true }));

  const pageCount = db.pragma("page_count", { simple: true }) as number;
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const lockPage = Math.floor(PENDING_BYTE_OFFSET / pageSize) + 1;
  const expected = pageCount - (pageCount >= lockPage ? 1 : 0);
  const free = readFreePages(db.name, pageCount);
  if ("problem" in free) throw new IntegrityProblem(free.problem);
  const freePages = free.trunks.flatMap((t) => [t.page, ...t.leaves]);
  if (freePages.includes(lockPage)) throw new IntegrityProblem(`the free list holds the lock-byte page ${lockPage}`);
  // One scan of dbstat answers both questions (it parses every page: 0.2 s for a 650 MB lds.db, so not twice);
  // SQLite indexes the IN list itself.
  const { pages, distinctPages, freeInUse } = db
    .prepare("SELECT count(*) AS pages, count(DISTINCT pageno) AS distinctPages, total(pageno IN (SELECT value FROM json_each(?))) AS freeInUse FROM dbstat")
    .get(JSON.stringify(freePages)) as { pages: number; distinctPages: number; freeInUse: number };
  if (distinctPages !== pages) throw new IntegrityProblem(`${pages - distinctPages} page(s) belong to more than one b-tree`);
  if (freeInUse > 0) throw new IntegrityProblem(`${freeInUse} page(s) are both free and in use`);
  if (pages + freePages.length !== expected) throw new IntegrityProblem(`${expected - pages - freePages.length} page(s) never used`);
}

/** The integrity checks of the virtual tables whose modules this connection has (FTS5's is the long one). */
export function checkVirtualTables(db: Database.Database): void {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND rootpage = 0").pluck().all() as string[];
  for (const table of tables) expectOk(db.pragma(`integrity_check(${quoted(table)})`, { simple: true }));
}

/** Auto-vacuum files interleave pointer-map pages with the rest: the header says so at byte 52. */
function hasPointerMaps(db: Database.Database): boolean {
  const header = Buffer.alloc(100);
  const fd = fs.openSync(db.name, "r");
  try {
    if (fs.readSync(fd, header, 0, 100, 0) < 100) return true;
  } finally {
    fs.closeSync(fd);
  }
  return header.readUInt32BE(52) !== 0;
}

export function expectOk(result: unknown): void {
  if (result !== "ok") throw new IntegrityProblem(String(result));
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
