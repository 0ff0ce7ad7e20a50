import fs from "node:fs";

/** The free pages of a database file, or what is wrong with its free list. */
export type FreePages = { pageSize: number; trunks: Array<{ page: number; leaves: number[] }> } | { problem: string };

/**
 * Walk the free list of a SQLite file (no connection needed; see sqlite.org/fileformat.html, "The Freelist"):
 * trunk pages chained from header offset 32, each listing leaf pages, `header[36]` pages in all. Every page number
 * is checked against the file's size (and `pagesInUse`, SQLite's page count) and seen once at most, and the count
 * must match, so a hostile file yields a problem, never a loop or a read outside it.
 */
export function readFreePages(file: string, pagesInUse?: number): FreePages {
  const fd = fs.openSync(file, "r");
  try {
    const header = Buffer.alloc(100);
    if (fs.readSync(fd, header, 0, 100, 0) < 100) return { problem: "the file is shorter than a database header" };
    const rawSize = header.readUInt16BE(16);
    const pageSize = rawSize === 1 ? 65536 : rawSize;
    if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return { problem: `the header gives an invalid page size (${rawSize})` };
    // SQLite's own page count (the header's, when valid) can be smaller than the file: free pages lie within it.
    const pageCount = Math.min(Math.floor(fs.fstatSync(fd).size / pageSize), pagesInUse ?? Infinity);
    const total = header.readUInt32BE(36);
    if (total > pageCount) return { problem: `the header counts ${total} free pages in a file of ${pageCount}` };
    const seen = new Set<number>();
    const valid = (page: number) => page >= 2 && page <= pageCount && !seen.has(page);
    const trunks: Array<{ page: number; leaves: number[] }> = [];
    const block = Buffer.alloc(pageSize);
    for (let trunk = header.readUInt32BE(32); trunk !== 0; trunk = block.readUInt32BE(0)) {
      if (!valid(trunk) || seen.size >= total) return { problem: `the free list is damaged at trunk page ${trunk}` };
      seen.add(trunk);
      fs.readSync(fd, block, 0, pageSize, (trunk - 1) * pageSize);
      const count = block.readUInt32BE(4);
      if (count > pageSize / 4 - 2) return { problem: `free-list trunk page ${trunk} lists ${count} pages` };
      const leaves: number[] = [];
      for (let i = 0; i < count; i++) {
        const leaf = block.readUInt32BE(8 + 4 * i);
        if (!valid(leaf) || seen.size >= total) return { problem: `free-list trunk page ${trunk} lists an invalid page ${leaf}` };
        seen.add(leaf);
        leaves.push(leaf);
      }
      trunks.push({ page: trunk, leaves });
    }
    if (seen.size !== total) return { problem: `the free list holds ${seen.size} pages, the header says ${total}` };
    return { pageSize, trunks };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Overwrite what a database's free pages still hold (deleted rows, old index entries) with zeros: leaf pages
 * whole, trunk pages after their list. SQLite ignores that content; a copy made by the backup API would otherwise
 * carry it. The file must not be open in SQLite meanwhile.
 */
export function zeroFreePages(file: string): void {
  const free = readFreePages(file);
  if ("problem" in free) throw new Error(`${file}: ${free.problem}`);
  const zeros = Buffer.alloc(free.pageSize);
  const fd = fs.openSync(file, "r+");
  try {
    for (const { page, leaves } of free.trunks) {
      const listEnd = 8 + 4 * leaves.length;
      fs.writeSync(fd, zeros, 0, free.pageSize - listEnd, (page - 1) * free.pageSize + listEnd);
      for (const leaf of leaves) fs.writeSync(fd, zeros, 0, free.pageSize, (leaf - 1) * free.pageSize);
    }
  } finally {
    fs.closeSync(fd);
  }
}
