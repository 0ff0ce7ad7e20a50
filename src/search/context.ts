import { LdsError } from "../errors.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { estimateTokens } from "../indexing/snippet.js";
import { accessDenied, type LibraryAccess } from "./library-access.js";
import type { LibraryRef } from "./library-ref.js";
import { findVisibleLibrary } from "./visible-library.js";
import type { StoredSnippet } from "../store/records.js";
import { rankSnippetsWithFallback, type RankingMethod } from "./rank-snippets.js";
import { action } from "../hints.js";
import { withoutPath } from "../util/hide-path.js";

export interface CodeSnippetAnswer {
  codeTitle: string;
  codeDescription: string;
  codeLanguage: string;
  codeTokens: number;
  /** Where the snippet comes from: source path and heading anchor. */
  codeId: string;
  pageTitle: string;
  codeList: Array<{ language: string; code: string }>;
}

export interface InfoSnippetAnswer {
  pageId: string;
  breadcrumb: string;
  content: string;
  contentTokens: number;
}

export interface ContextAnswer {
  /** The library answered from (the id as resolved from what the client sent, without a pinned version). */
  libraryId: string;
  /** Set when vectors could not take part and BM25 ranked alone: why (a rebuilding index, a slow provider). */
  rankingFallback?: string;
  /** Both kinds in rank order, as they were chosen (the text rendering interleaves them; JSON splits them). */
  snippets: Array<CodeSnippetAnswer | InfoSnippetAnswer>;
}

/** The `type=json` shape: code and info snippets apart, each kind in rank order. */
export function contextAsJson(answer: ContextAnswer): { codeSnippets: CodeSnippetAnswer[]; infoSnippets: InfoSnippetAnswer[]; rankingFallback?: string } {
  return {
    ...(answer.rankingFallback ? { rankingFallback: answer.rankingFallback } : {}),
    codeSnippets: answer.snippets.filter((s): s is CodeSnippetAnswer => "codeList" in s),
    infoSnippets: answer.snippets.filter((s): s is InfoSnippetAnswer => !("codeList" in s)),
  };
}

export interface ContextRequest {
  /** The library id as the client sent it: /owner/repo, /<source>/<id>, optionally pinned to a version. */
  libraryId: string;
  query: string;
  /** Token budget: the snippets returned never add up to more. */
  tokens: number;
  method?: RankingMethod;
}

/**
 * The snippets of one library version that best answer `query`, within the token budget: ranked (hybrid by
 * default), exact duplicates dropped, then taken in rank order while they fit (a snippet too large for what is left
 * is skipped, so a smaller, lower-ranked one may still fill the budget).
 */
export async function buildContext(volume: OpenVolume, access: LibraryAccess, request: ContextRequest): Promise<ContextAnswer> {
  const { store } = volume;
  // Only libraries this reader may see are candidates: another team's private library changes no answer.
  const { ref, library } = await findVisibleLibrary(store, access, request.libraryId);
  if (!access.mayUse(library)) throw accessDenied(library.id);
  if (ref.version) await checkVersion(volume, ref);
  const { ids, fallback } = await rankSnippetsWithFallback(volume, ref, request.query, request.method);
  if (ids.length === 0) throw noSnippets(ref, library, volume.paths.root);

  // A vector whose snippet was replaced a moment ago loads nothing and is left out.
  const rows = await store.snippets.load(ref.libraryId, ref.version, ids);
  const seen = new Set<string>();
  const answer: ContextAnswer = { libraryId: library.id, snippets: [], ...(fallback ? { rankingFallback: fallback } : {}) };
  let left = request.tokens;
  for (const row of rows) {
    const key = `${row.kind}\0${row.content.replace(/\s+/g, " ").trim()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const cost = estimateTokens(`${row.title}\n${row.description}\n${row.content}\n${row.sourcePath ?? ""}`);
    if (cost > left) continue;
    left -= cost;
    answer.snippets.push(row.kind === "code" ? codeAnswer(row, cost) : infoAnswer(row, cost));
  }
  return answer;
}

function codeAnswer(row: StoredSnippet, tokens: number): CodeSnippetAnswer {
  const source = row.sourcePath ?? "";
  return {
    codeTitle: row.title,
    codeDescription: row.description,
    codeLanguage: row.language ?? "",
    codeTokens: tokens,
    codeId: source,
    pageTitle: row.pageTitle ?? pageTitleOf(source),
    codeList: [{ language: row.language ?? "", code: row.content }],
  };
}

function infoAnswer(row: StoredSnippet, tokens: number): InfoSnippetAnswer {
  const source = row.sourcePath ?? "";
  const page = row.pageTitle ?? pageTitleOf(source);
  return { pageId: source, breadcrumb: page && page !== row.title ? `${page} > ${row.title}` : row.title, content: row.content, contentTokens: tokens };
}

function pageTitleOf(source: string): string {
  return (source.split("#")[0]!.split("/").pop() ?? "").replace(/\.[^.]+$/, "").replace(/[-_]/g, " ");
}

async function checkVersion(volume: OpenVolume, ref: LibraryRef): Promise<void> {
  const versions = await volume.store.versions.names(ref.libraryId);
  if (!versions.includes(ref.version)) {
    throw new LdsError("tag_not_found", `${ref.libraryId} has no version "${ref.version.slice(0, 100)}"; available versions: ${versions.join(", ") || "none (only the current content)"}.`, {
      hint: `Ask without a version (${ref.libraryId}) for the current content, or pin one of the available versions.`,
    });
  }
}

/**
 * Nothing to answer with: a library whose first processing still runs is 202 library_not_finalized (ask again
 * shortly, as the hosted service answers); one whose processing failed or found nothing is no_snippets_found.
 */
function noSnippets(ref: LibraryRef, library: { state: string; stateReason: string | null }, volumeRoot: string): LdsError {
  const name = ref.version ? `${ref.libraryId}/${ref.version}` : ref.libraryId;
  if (!ref.version && library.state !== "failed" && library.state !== "finalized") {
    return new LdsError("library_not_finalized", `${name} is still being processed (${library.state}): its documentation is not ready yet.`, {
      hint: "Ask again in a minute; a first processing takes about as long as cloning the repository.",
    });
  }
  const why =
    // A reason recorded before 0.7.11 may still quote the data volume's path (git's stderr, a system error): hidden here.
    library.state === "failed"
      ? `its processing failed: ${withoutPath(library.stateReason ?? "no reason recorded", volumeRoot).replace(/\.$/, "")}`
      : library.state !== "finalized"
        ? `it is still being processed (${library.state})`
        : "none were indexed";
  return new LdsError("no_snippets_found", `No documentation snippets could be fetched for ${name}: ${why}.`, {
    hint: library.state === "failed" ? `Fix the cause and refresh it: ${action("library.refresh", { libraryName: ref.libraryId })}.` : "Try again when its processing has finished.",
  });
}
