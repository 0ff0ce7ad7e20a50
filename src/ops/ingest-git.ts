import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LdsError } from "../errors.js";
import { delaypoint } from "../util/failpoint.js";
import { recordedFailure } from "./failure-reason.js";
import { leaseWasLost, recordsUnreachable } from "./job-lease.js";
import { collectDocuments } from "../indexing/collect.js";
import { documentSnippets } from "../indexing/parse-documents.js";
import { collectSourceSnippets } from "../indexing/source-code.js";
import { replaceLibrarySnippets } from "../indexing/replace-snippets.js";
import { fetchRepository, remoteHead } from "../sources/git.js";
import type { GitUrlPolicy } from "../config/git-settings.js";
import { checkRepositoryUrl } from "../sources/git-url.js";
import { repositoryDescription } from "../indexing/repository-description.js";
import { noSnippetsFound } from "../indexing/snippet.js";
import type { BranchRecord, JobLease, LibraryState } from "../store/records.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { checkVersionName } from "./version-name.js";

export interface IngestGitOptions extends GitUrlPolicy {
  volume: OpenVolume;
  /** The library, created by a submission (or by `resolveIngestTarget` for the CLI). */
  libraryId: string;
  repositoryUrl: string;
  branch?: string;
  /** Never stored by this function, never logged or returned. */
  token?: string;
  /** A connected account's fresh token, asked for once when the host refuses `token` (see ops/git-connection.ts). */
  renewToken?: () => Promise<string | undefined>;
  skipVersionFiltering?: boolean;
  /** Also make snippets from the source code's documented exports (TypeScript/JavaScript, Python, Go). */
  generateDocs?: boolean;
  /**
   * Index `branch` (a tag or branch) as this pinned version of the library (/owner/repo/v1.2) instead of as its
   * current content. The library's state and branch records are left alone: a version is an extra.
   */
  version?: string;
  signal?: AbortSignal;
  /** The job's lease when a job runner ingests: the publication is fenced by it (an operator's ingestion has none). */
  lease?: JobLease;
}

export interface IngestResult {
  libraryId: string;
  branch: string;
  commit: string;
  snippets: number;
  /** True when the branch's commit was already indexed: nothing was fetched. */
  unchanged: boolean;
}

/**
 * Index a git repository into a library: states queued → fetching → parsing → embedding → finalized (or failed,
 * with the reason), the work folder on the data volume removed in every case. A branch whose commit is already
 * indexed costs one `git ls-remote`.
 */
export async function ingestGitRepository(options: IngestGitOptions): Promise<IngestResult> {
  const { store } = options.volume;
  const { libraryId } = options;
  const { url } = checkRepositoryUrl(options.repositoryUrl, options);
  if (options.version !== undefined) return ingestVersion(options, libraryId, url);
  const branches = await store.libraries.servedBranches(libraryId);
  const setState = (state: LibraryState, reason: string | null = null) => store.libraries.setState(libraryId, state, reason);

  try {
    const { head, token } = await remoteHeadRenewing(options, url, options.branch);
    const known = branches.find((b) => (options.branch ? b.name === options.branch : b === branches[0]));
    // A library serves one branch: its record is replaced, never kept beside another (docs/api.md, "Branches").
    if (known && known.commit === head) {
      // The index is intact at this commit: whatever a re-submission set the state to, it is finished.
      await setState("finalized");
      return { libraryId, branch: known.name, commit: head, snippets: await store.snippets.count(libraryId, ""), unchanged: true };
    }
    const { fetched, count, description } = await fetchAndIndex({ ...options, token }, libraryId, url, options.branch, "", setState);
    const record: BranchRecord = { name: fetched.branch, commit: fetched.commit, fetchedAt: new Date().toISOString() };
    await store.libraries.recordServedBranch(libraryId, record);
    await store.libraries.setDescription(libraryId, description);
    await setState("finalized");
    return { libraryId, branch: fetched.branch, commit: fetched.commit, snippets: count, unchanged: false };
  } catch (err) {
    // A runner that lost the job's lease leaves the library to the runner holding the job now, and an ingestion
    // superseded by a newer one of the same library (a command's beside a server's job) to that newer one.
    if (!leaseWasLost(err, options.signal) && !recordsUnreachable(err) && !superseded(err)) await setState("failed", recordedFailure(err, options.volume.paths.root));
    throw err;
  }
}

const superseded = (err: unknown) => err instanceof LdsError && err.code === "ingestion_superseded";

/**
 * The commit `ref` points at (`git ls-remote`), and the token that was let in. When the host refuses the token and a
 * connected account can renew it (an OAuth token its provider invalidated before it expired), it is asked once
 * for a fresh one and the host asked again; the clone then uses the fresh one.
 */
async function remoteHeadRenewing(options: IngestGitOptions, url: URL, ref: string | undefined): Promise<{ head: string; token?: string }> {
  const ask = (token: string | undefined) => remoteHead({ url, branch: ref, token, caFile: options.caFile, signal: options.signal });
  try {
    return { head: await ask(options.token), token: options.token };
  } catch (err) {
    if (!(err instanceof LdsError && err.code === "repository_auth_failed" && options.renewToken)) throw err;
    const renewed = await options.renewToken();
    if (renewed === undefined) throw err;
    return { head: await ask(renewed), token: renewed };
  }
}

/** A pinned version: fetched and indexed like the current content, recorded in library_versions. */
async function ingestVersion(options: IngestGitOptions, libraryId: string, url: URL): Promise<IngestResult> {
  const { store } = options.volume;
  const version = options.version!;
  checkVersionName(version);
  const ref = options.branch ?? version;
  const known = await store.versions.commit(libraryId, version);
  const { head, token } = await remoteHeadRenewing(options, url, ref);
  if (known === head) return { libraryId, branch: ref, commit: head, snippets: await store.snippets.count(libraryId, version), unchanged: true };
  const { fetched, count } = await fetchAndIndex({ ...options, token }, libraryId, url, ref, version);
  await store.versions.record(libraryId, { name: version, ref, commit: fetched.commit });
  return { libraryId, branch: ref, commit: fetched.commit, snippets: count, unchanged: false };
}

/**
 * Clone `ref` (a branch or tag; the default branch when absent) into a work folder on the data volume, parse it
 * into snippets and swap them in as `version` ("" = the current content). The folder is removed in every case.
 */
async function fetchAndIndex(
  options: IngestGitOptions,
  libraryId: string,
  url: URL,
  ref: string | undefined,
  version: string,
  onState: (state: LibraryState) => Promise<void> = async () => {},
): Promise<{ fetched: { branch: string; commit: string }; count: number; description: string }> {
  const work = path.join(options.volume.paths.root, "work", `ingest-${randomBytes(6).toString("hex")}`);
  try {
    await onState("fetching");
    fs.mkdirSync(path.dirname(work), { recursive: true, mode: 0o700 });
    const fetched = await fetchRepository({ url, branch: ref, token: options.token, caFile: options.caFile, dir: work, signal: options.signal, maxBytes: options.maxRepositoryBytes });
    // For the tests of a replica stopped mid-job: an ingestion that stays under way after its fetch.
    await delaypoint("ingestion-under-way", 20_000, options.signal);
    await onState("parsing");
    const files = collectDocuments(work, { skipVersionFiltering: options.skipVersionFiltering });
    // From here files are parsed, embedded and written a chunk at a time: "embedding" covers the three.
    await onState("embedding");
    function* snippets() {
      yield* documentSnippets(work, files);
      if (options.generateDocs) yield* collectSourceSnippets(work);
    }
    const description = repositoryDescription(work);
    // Nothing to index is a failure, and never replaces a library that had snippets with an empty one.
    const whenEmpty = () => noSnippetsFound(version ? `${libraryId}/${version}` : libraryId);
    return { fetched, count: await replaceLibrarySnippets(options.volume, libraryId, snippets(), version, { whenEmpty, signal: options.signal, lease: options.lease }), description };
  } finally {
    // Asynchronously: removing a checkout of thousands of files takes a server's event loop 100 ms and more.
    await fs.promises.rm(work, { recursive: true, force: true });
  }
}
