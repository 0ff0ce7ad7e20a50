import { LdsError } from "../errors.js";

/** A library as a client names it: its id, and a pinned version when one was asked for. */
export interface LibraryRef {
  libraryId: string;
  /** "" for the library's current content. */
  version: string;
}

const SEGMENT = "[A-Za-z0-9._-]+";
const PINNED = new RegExp(`^(/${SEGMENT}/${SEGMENT})(?:/(${SEGMENT})|@([A-Za-z0-9._/-]+))?$`);

/**
 * Parse `/owner/repo`, `/<source>/<id>`, or either pinned to a version as `/owner/repo/v1.2` or `/owner/repo@v1.2`
 * (the two forms clients of hosted services of this kind send). Anything else is invalid_library_id.
 */
export function parseLibraryRef(raw: string): LibraryRef {
  const match = PINNED.exec(raw.trim());
  if (!match || raw.length > 512) {
    throw new LdsError("invalid_library_id", `"${raw.slice(0, 100)}" is not a library id of the form /owner/repo or /<source>/<id> (optionally /owner/repo/<version> or @<version>).`, {
      hint: "Find the id with GET /v2/libs/search?libraryName=<name>.",
    });
  }
  return { libraryId: match[1]!, version: match[2] ?? match[3] ?? "" };
}
