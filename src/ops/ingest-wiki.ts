import { recordedFailure } from "./failure-reason.js";
import { leaseWasLost, recordsUnreachable } from "./job-lease.js";
import { parseConfluenceStorage } from "../indexing/confluence-storage.js";
import { replaceLibrarySnippets } from "../indexing/replace-snippets.js";
import { fetchSpacePages, type WikiAuth } from "../sources/confluence.js";
import { grantAccessToken } from "../oauth/tokens.js";
import type { JobLease, LibraryState, WikiConnection } from "../store/records.js";
import type { Store } from "../store/store.js";
import { noSnippetsFound } from "../indexing/snippet.js";
import type { OpenVolume } from "../volume/open-volume.js";

export interface IngestWikiOptions {
  volume: OpenVolume;
  libraryId: string;
  teamId: number;
  cloudId: string;
  spaceKey: string;
  pageIds?: string[];
  signal?: AbortSignal;
  /** The job's lease when a job runner ingests: the publication is fenced by it (an operator's ingestion has none). */
  lease?: JobLease;
}

/** A pasted token as it is; an OAuth grant's token refreshed before expiry, and again when the wiki answers 401. */
async function wikiAuth(store: Store, connection: WikiConnection): Promise<WikiAuth> {
  if (connection.grantId === undefined) return { token: await store.connections.wikiToken(connection) };
  const grantId = connection.grantId;
  return { token: await grantAccessToken(store, grantId), renew: () => grantAccessToken(store, grantId, { force: true }) };
}

/** Index a wiki space (or some of its pages) with the team's connected account, replacing the library atomically. */
export async function ingestWikiSpace(options: IngestWikiOptions): Promise<{ pages: number; snippets: number }> {
  const { store } = options.volume;
  const setState = (state: LibraryState, reason: string | null = null) => store.libraries.setState(options.libraryId, state, reason);
  try {
    const connection = await store.connections.findWiki(options.teamId, options.cloudId);
    if (!connection) throw new Error(`the team's wiki connection for cloud ${options.cloudId} was removed`);
    await setState("fetching");
    const { pages } = await fetchSpacePages({
      apiBase: connection.apiBase,
      auth: await wikiAuth(store, connection),
      spaceKey: options.spaceKey,
      pageIds: options.pageIds,
      signal: options.signal,
    });
    await setState("parsing");
    const snippets = pages.flatMap((page) => parseConfluenceStorage(page.storage, `pages/${page.id}`, page.title));
    if (snippets.length === 0) throw noSnippetsFound(options.libraryId);
    await setState("embedding");
    const count = await replaceLibrarySnippets(options.volume, options.libraryId, snippets, "", { signal: options.signal, lease: options.lease });
    await setState("finalized");
    return { pages: pages.length, snippets: count };
  } catch (err) {
    // A runner that lost the job's lease leaves the library to the runner holding the job now.
    if (!leaseWasLost(err, options.signal) && !recordsUnreachable(err)) await setState("failed", recordedFailure(err, options.volume.paths.root));
    throw err;
  }
}
