import { LdsError } from "../errors.js";
import type { LibraryAccess } from "./library-access.js";
import type { Store } from "../store/store.js";
import { summarise, type SummarisedLibrary, type LibrarySummary } from "./library-summary.js";
import type { SearchIndex } from "../index/search-index.js";
import { queryTerms } from "../index/query-terms.js";
import { action } from "../hints.js";

export interface LibrarySearch {
  libraryName: string;
  /** The task or question: ranks libraries of equal name match by how well their content answers it. */
  query?: string;
  limit?: number;
}

const DEFAULT_LIMIT = 10;

/**
 * Libraries whose name matches `libraryName`, best first: by how closely the name matches (exact, prefix,
 * substring, all words), then by how relevant the library's content is to `query` (its best BM25 score),
 * then by size. Only libraries the reader can see and use are listed; none at all is no_libraries_found.
 */
export async function searchLibraries(store: Store, index: SearchIndex, access: LibraryAccess, search: LibrarySearch): Promise<LibrarySummary[]> {
  const wanted = normalise(search.libraryName);
  const words = search.libraryName.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const rows = await store.libraries.list();
  // Names first (cheap, in memory), access only for the matches (it may query the team's allow-list).
  const matched = rows.map((row) => ({ row, name: nameScore(row, wanted, words) })).filter((m) => m.name > 0 && access.canSee(m.row) && access.mayUse(m.row));
  if (matched.length === 0) {
    throw new LdsError("no_libraries_found", `No library matches "${search.libraryName.slice(0, 100)}".`, {
      hint: `Try a shorter or different name; a repository must be submitted (${action("library.submit")}) before it can be found.`,
    });
  }
  // Name match decides first, so content relevance is only computed for the strongest name matches.
  const limit = Math.max(1, Math.min(search.limit ?? DEFAULT_LIMIT, 50));
  const best = matched.sort((a, b) => b.name - a.name).slice(0, limit * 3);
  const terms = search.query ? queryTerms(search.query) : [];
  const relevance =
    terms.length > 0
      ? await index.libraryRelevance(
          terms,
          best.map((m) => m.row.id),
        )
      : new Map<string, number>();
  const ranked = await Promise.all(best.map(async (m) => ({ summary: await summarise(store, m.row), name: m.name, relevance: relevance.get(m.row.id) ?? 0 })));
  ranked.sort((a, b) => b.name - a.name || b.relevance - a.relevance || b.summary.totalSnippets - a.summary.totalSnippets || a.summary.id.localeCompare(b.summary.id));
  return ranked.slice(0, limit).map((r) => r.summary);
}

/** Lower case, letters and digits only: "Next.js", "nextjs" and "next-js" are the same name. */
function normalise(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

/** 5 exact name, 4 exact owner/repo, 3 name prefix, 2 substring of name or id, 1 every word somewhere, 0 no match. */
function nameScore(row: SummarisedLibrary, wanted: string, words: string[]): number {
  if (!wanted) return 0;
  const [owner = "", repo = ""] = row.id.split("/").slice(1);
  const names = [normalise(repo), normalise(row.title)];
  if (names.includes(wanted)) return 5;
  if (normalise(owner + repo) === wanted) return 4;
  if (names.some((n) => n.startsWith(wanted))) return 3;
  if (names.some((n) => n.includes(wanted)) || normalise(row.id).includes(wanted)) return 2;
  const haystack = `${row.id} ${row.title} ${row.description}`.toLowerCase();
  return words.length > 0 && words.every((w) => haystack.includes(w)) ? 1 : 0;
}
