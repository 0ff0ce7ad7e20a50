import { LdsError } from "../errors.js";
import { action } from "../hints.js";
import { LIBRARY_ID_SOURCE, isLibraryId } from "../util/library-id.js";

/** A library as a client names it: its id, and a pinned version when one was asked for. */
export interface LibraryRef {
  libraryId: string;
  /** "" for the library's current content. */
  version: string;
}

/** An id (util/library-id.ts), optionally pinned to a version as `...@v1.2`. */
const PINNED = new RegExp(`^(${LIBRARY_ID_SOURCE})(?:@([A-Za-z0-9._/-]+))?$`);

/**
 * The readings of a library id as clients send it, most specific first: `/owner/repo`, `/<source>/<id>`
 * (`/<host>/owner/repo`, `/~team-3/owner/repo`), or either pinned to a version as `.../v1.2` or `...@v1.2`.
 * A trailing segment is a version only when the reader can see no library with the whole path as its id (see
 * findVisibleLibrary).
 */
export function parseLibraryRef(raw: string): LibraryRef[] {
  const match = raw.length > 512 ? null : PINNED.exec(raw.trim());
  if (!match || !isLibraryId(match[1]!)) {
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
