import { LdsError } from "../errors.js";
import { action } from "../hints.js";

export interface WikiPage {
  id: string;
  title: string;
  /** The page body in Confluence storage format (XHTML). */
  storage: string;
}

export interface FetchSpaceOptions {
  /** Where the v2 REST API lives: a site (https://acme.atlassian.net) or https://api.atlassian.com/ex/confluence/<cloudId>. */
  apiBase: string;
  /** The token to send, and (for an OAuth connection) a fresh one after the wiki answered 401 to it. */
  auth: WikiAuth;
  spaceKey: string;
  /** Only these pages; the whole space when absent. */
  pageIds?: string[];
  /** Stop after this many pages. @default 10,000 */
  maxPages?: number;
  signal?: AbortSignal;
}

export interface WikiAuth {
  token: string;
  renew?: () => Promise<string>;
}

const PAGE_LIMIT = 100;

/**
 * Fetch a space's pages with their storage-format bodies over Confluence Cloud's REST API v2, following cursor
 * pagination. Only the `cursor` of a `_links.next` is used, on our own base URL: a response never chooses the host
 * our token is sent to.
 */
export async function fetchSpacePages(options: FetchSpaceOptions): Promise<{ spaceName: string; pages: WikiPage[] }> {
  const base = options.apiBase.replace(/\/+$/, "");
  let token = options.auth.token;
  const request = async (pathAndQuery: string) => {
    try {
      return await fetch(`${base}${pathAndQuery}`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
        signal: options.signal,
        redirect: "error",
      });
    } catch (err) {
      throw new LdsError("repository_unreachable", `Cannot reach the wiki at ${new URL(base).host} (${(err as Error).message}).`, { hint: "Check the connection's API base and the network." });
    }
  };
  const get = async (pathAndQuery: string) => {
    let response = await request(pathAndQuery);
    // An OAuth access token can expire (or be invalidated) mid-crawl: renew it once and ask again.
    if (response.status === 401 && options.auth.renew) {
      token = await options.auth.renew();
      response = await request(pathAndQuery);
    }
    if (response.status === 401 || response.status === 403) {
      throw new LdsError("repository_auth_failed", `The wiki at ${new URL(base).host} refused the connection's token (HTTP ${response.status}).`, {
        hint: `Connect the wiki account again: ${action("connection.addWiki")}.`,
      });
    }
    if (response.status === 404) return null;
    if (!response.ok) throw new LdsError("repository_unreachable", `The wiki answered HTTP ${response.status} for ${pathAndQuery.split("?")[0]}.`);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
    return (await response.json()) as Record<string, any>;
  };

  const spaces = await get(`/wiki/api/v2/spaces?keys=${encodeURIComponent(options.spaceKey)}&limit=1`);
  const space = spaces?.results?.[0];
  if (!space || space.key !== options.spaceKey) {
    throw new LdsError("wiki_space_not_found", `The wiki has no space ${options.spaceKey} (or the token cannot see it).`, { hint: "Check spaceKey." });
  }
  const pages: WikiPage[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
  const take = (p: Record<string, any>) => {
    const storage = p?.body?.storage?.value;
    if (typeof p?.id === "string" && typeof p?.title === "string" && typeof storage === "string") pages.push({ id: p.id, title: p.title, storage });
  };
  if (options.pageIds?.length) {
    for (const id of options.pageIds) {
      const page = await get(`/wiki/api/v2/pages/${encodeURIComponent(id)}?body-format=storage`);
      if (!page || String(page.spaceId) !== String(space.id)) {
        throw new LdsError("wiki_space_not_found", `Page ${id} is not in space ${options.spaceKey}.`, { hint: "Check pageIds." });
      }
      take(page);
    }
    return { spaceName: space.name ?? options.spaceKey, pages };
  }
  const max = options.maxPages ?? 10_000;
  let cursor: string | null = null;
  do {
    const query = `body-format=storage&limit=${PAGE_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const listing = await get(`/wiki/api/v2/spaces/${encodeURIComponent(space.id)}/pages?${query}`);
    for (const page of listing?.results ?? []) take(page);
    const next: unknown = listing?._links?.next;
    cursor = typeof next === "string" ? new URL(next, "https://x.invalid").searchParams.get("cursor") : null;
  } while (cursor && pages.length < max);
  return { spaceName: space.name ?? options.spaceKey, pages: pages.slice(0, max) };
}
