import { describeFailure } from "../errors.js";
import { parseConfluenceStorage } from "../indexing/confluence-storage.js";
import { replaceLibrarySnippets } from "../indexing/replace-snippets.js";
import { fetchSpacePages } from "../sources/confluence.js";
import { findWikiConnection, wikiToken } from "../store/connections.js";
import { noSnippetsFound, setLibraryState, type LibraryState } from "../store/libraries.js";
import type { OpenVolume } from "../volume/open-volume.js";

export interface IngestWikiOptions {
  volume: OpenVolume;
  libraryId: string;
  teamId: number;
  cloudId: string;
  spaceKey: string;
  pageIds?: string[];
  signal?: AbortSignal;
}

/** Index a wiki space (or some of its pages) with the team's connected account, replacing the library atomically. */
export async function ingestWikiSpace(options: IngestWikiOptions): Promise<{ pages: number; snippets: number }> {
  const { db } = options.volume;
  const setState = (state: LibraryState, reason: string | null = null) => setLibraryState(db, options.libraryId, state, reason);
  try {
    const connection = findWikiConnection(db, options.teamId, options.cloudId);
    if (!connection) throw new Error(`the team's wiki connection for cloud ${options.cloudId} was removed`);
    setState("fetching");
    const { pages } = await fetchSpacePages({
      apiBase: connection.apiBase,
      token: wikiToken(db, options.volume.key, connection),
      spaceKey: options.spaceKey,
      pageIds: options.pageIds,
      signal: options.signal,
    });
    setState("parsing");
    const snippets = pages.flatMap((page) => parseConfluenceStorage(page.storage, `pages/${page.id}`, page.title));
    if (snippets.length === 0) throw noSnippetsFound(options.libraryId);
    setState("embedding");
    const count = await replaceLibrarySnippets(options.volume, options.libraryId, snippets);
    setState("finalized");
    return { pages: pages.length, snippets: count };
  } catch (err) {
    setState("failed", describeFailure(err));
    throw err;
  }
}
