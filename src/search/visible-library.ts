import { LdsError } from "../errors.js";
import type { Library } from "../store/records.js";
import type { Store } from "../store/store.js";
import { libraryNotFound, type LibraryAccess } from "./library-access.js";
import { parseLibraryRef, type LibraryRef } from "./library-ref.js";

/** 301 library_redirected: the library a client named has a new id (the hosted service's answer, redirectUrl). */
export class LibraryRedirected extends LdsError {
  constructor(
    sent: string,
    /** What the client should ask for instead: the new id, with the version it pinned. */
    readonly redirectUrl: string,
  ) {
    super("library_redirected", `The library ${sent} has a new id: ${redirectUrl}. Ask for ${redirectUrl} from now on.`, {
      hint: `Use ${redirectUrl} wherever the old id was configured.`,
    });
  }
}

/**
 * The library a reader names, resolved among the libraries the reader may see only: each reading of the id, most
 * specific first (parseLibraryRef), is a library only if the reader can see it, so that what exists elsewhere
 * never changes the answer. A reading that names a renamed library of the reader's (a redirect whose target the
 * reader can see) answers 301 with the new id, ahead of any library that took the old id since. Nothing visible:
 * library_not_found echoing the id exactly as sent.
 */
export async function findVisibleLibrary(store: Store, access: LibraryAccess, sent: string): Promise<{ ref: LibraryRef; library: Library }> {
  for (const ref of parseLibraryRef(sent)) {
    const library = await visibleAt(store, access, ref.libraryId, sent, ref.version);
    if (library) return { ref, library };
  }
  throw libraryNotFound(sent);
}

/**
 * The library an id names exactly, for this reader (refresh and metrics, which take no pinned version): the same
 * rules as findVisibleLibrary, with `notFound` for the answer when the reader sees nothing there.
 */
export async function findVisibleExactly(store: Store, access: LibraryAccess, libraryId: string, notFound: () => LdsError = () => libraryNotFound(libraryId)): Promise<Library> {
  parseLibraryRef(libraryId); // the same id syntax as search and context: invalid_library_id otherwise
  const library = await visibleAt(store, access, libraryId, libraryId, "");
  if (!library) throw notFound();
  return library;
}

/** The library at one reading of an id if the reader can see it; a redirect of the reader's own answers 301 first. */
async function visibleAt(store: Store, access: LibraryAccess, libraryId: string, sent: string, version: string): Promise<Library | undefined> {
  // Both read at once (two round trips in one on a shared database): the library is needed whenever no redirect wins.
  const [renamedTo, library] = await Promise.all([store.libraries.redirect(libraryId), store.libraries.find(libraryId)]);
  const target = renamedTo === undefined ? undefined : await store.libraries.find(renamedTo);
  if (target && access.canSee(target)) throw new LibraryRedirected(sent, version ? `${target.id}/${version}` : target.id);
  return library && access.canSee(library) ? library : undefined;
}
