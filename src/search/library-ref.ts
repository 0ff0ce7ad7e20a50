import { LdsError } from "../errors.js";
import { action } from "../hints.js";

/** A library as a client names it: its id, and a pinned version when one was asked for. */
export interface LibraryRef {
  libraryId: string;
  /** "" for the library's current content. */
  version: string;
}

const SEGMENT = "[A-Za-z0-9._-]+";
/** The first segment may name a host with a port (/git.example.com:8443/owner/repo). */
const ID = `/[A-Za-z0-9._:-]+(?:/${SEGMENT}){1,7}`;
const PINNED = new RegExp(`^(${ID})(?:@([A-Za-z0-9._/-]+))?$`);

/**
 * The readings of a library id as clients send it, most specific first: `/owner/repo`, `/<source>/<id>`
 * (`/<host>/owner/repo`, `/team-3/owner/repo`), or either pinned to a version as `.../v1.2` or `...@v1.2`.
 * A trailing segment is a version only when no library has the whole path as its id (see resolveLibraryRef).
 */
export function parseLibraryRef(raw: string): LibraryRef[] {
  const match = PINNED.exec(raw.trim());
  if (!match || raw.length > 512 || match[1]!.includes("/..") || match[1]!.startsWith("/.")) {
    throw new LdsError("invalid_library_id", `"${raw.slice(0, 100)}" is not a library id of the form /owner/repo or /<source>/<id> (optionally /owner/repo/<version> or @<version>).`, {
      hint: `Find the id: ${action("library.list")}.`,
    });
  }
  const [, id, pinned] = match as unknown as [string, string, string | undefined];
  if (pinned !== undefined) return [{ libraryId: id, version: pinned }];
  const cut = id.lastIndexOf("/");
  const asVersion = id.slice(1).split("/").length >= 3 ? [{ libraryId: id.slice(0, cut), version: id.slice(cut + 1) }] : [];
  return [{ libraryId: id, version: "" }, ...asVersion];
}

/** The reading whose library exists (`existing` asks the store), else the plain one (then "not found" names it). */
export async function resolveLibraryRef(raw: string, existing: (libraryIds: string[]) => Promise<Set<string>>): Promise<LibraryRef> {
  const readings = parseLibraryRef(raw);
  const found = await existing(readings.map((r) => r.libraryId));
  return readings.find((r) => found.has(r.libraryId)) ?? readings[0]!;
}
