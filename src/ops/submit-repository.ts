import { isLdsError, LdsError } from "../errors.js";
import { accessDenied, callerAccess } from "../search/library-access.js";
import type { GitUrlPolicy } from "../config/git-settings.js";
import { checkRepositoryUrl, gitLibraryId, type RepositoryUrl } from "../sources/git-url.js";
import type { Caller, Library } from "../store/records.js";
import { connectedGitToken } from "./git-connection.js";
import { servedBranch } from "../store/record-values.js";
import type { Store } from "../store/store.js";
import { checkVersionName } from "./version-name.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { action } from "../hints.js";
import { privateScopeOf } from "../util/library-id.js";

export interface RepositorySubmission {
  docsRepoUrl: string;
  gitToken?: string;
  private?: boolean;
  skipVersionFiltering?: boolean;
  generateDocs?: boolean;
  /** A new library serves this branch; an existing one gets it added as a pinned version (docs/api.md, "Branches"). */
  branch?: string;
}

export interface SubmissionContext {
  volume: OpenVolume;
  caller: Caller;
  policy: GitUrlPolicy;
  /** Counts a re-submission that starts a refresh against the caller's refresh limit (throws when over it). */
  chargeRefresh: (isOwner: boolean) => Promise<void>;
}

export interface SubmissionAnswer {
  libraryName: string;
  message: string;
}

/**
 * Submit a git repository (POST /v2/add/repo/hostb). A library's source is fixed when it is created: the same
 * id from another source is refused (409 source_conflict) and changes nothing; the same source again is a refresh
 * under the refresh limits, or a no-op while one is pending.
 */
export async function submitRepository(ctx: SubmissionContext, body: RepositorySubmission): Promise<SubmissionAnswer> {
  const { store } = ctx.volume;
  const { caller, policy } = ctx;
  const repo = repositoryUrl(body.docsRepoUrl, policy);
  if (body.generateDocs && !body.private) {
    throw new LdsError("validation_error", "generateDocs applies to private repository submissions only.", { hint: 'Add "private": true, or leave generateDocs out.' });
  }
  if (body.private) {
    if (caller.role === "member") throw new LdsError("forbidden", "Only team owners and admins can add private repositories.");
    if (caller.plan === "free") throw new LdsError("forbidden", "Your plan does not allow private repositories: a Pro plan or a team is required.");
  }
  if (body.branch !== undefined) checkBranchName(body.branch);
  // Without a gitToken, a private repository is cloned with the team's connection: it must be valid for this host.
  if (!body.gitToken && body.private) await connectedGitToken(store, caller.teamId, repo.host, policy);

  const access = await callerAccess(store, caller);
  // The library of this source, under whatever id it was created (0.3.0 ids had no team scope or host).
  const bySource = (await store.libraries.bySource(repo.sourceKey)).find((l) => (body.private ? l.private && l.teamId === caller.teamId : !l.private));
  if (bySource && !access.mayUse(bySource)) throw accessDenied(bySource.id);
  if (bySource && body.private && body.branch === undefined) {
    throw new LdsError("duplicate_repo", `The private repository ${repo.sourceKey} is already in your team as ${bySource.id}.`, {
      hint: `Refresh it: ${action("library.refresh", { libraryName: bySource.id })}.`,
    });
  }
  if (bySource) return body.branch !== undefined && body.branch !== (await trackedBranch(store, bySource)) ? addBranch(ctx, bySource, body) : resubmit(ctx, bySource, body);
  const libraryId = gitLibraryId(repo, { defaultHost: policy.defaultHost, privateTeamId: body.private ? caller.teamId : undefined });
  // By construction (git-url.ts): a public id is never in a team's namespace, a private one only in the caller's.
  if (privateScopeOf(libraryId) !== (body.private ? caller.teamId : undefined)) throw new Error(`library id ${libraryId} is outside its namespace`);
  if (!access.mayUse({ id: libraryId, source: "git" })) throw accessDenied(libraryId);
  const taken = await store.libraries.find(libraryId);
  // Taken by another source (another host's repository before ids named hosts): refused, naming the other source.
  // Private ids are in their team's reserved namespace (/~team-<N>/...), so a library the caller cannot see holds
  // such an id only in a volume of 0.3.0 (a private id without a scope whose team was removed since): the answer
  // then names no source.
  if (taken) throw sourceConflict(libraryId, repo, access.canSee(taken) ? taken : undefined);
  const options = { skipVersionFiltering: body.skipVersionFiltering, generateDocs: body.generateDocs, branch: body.branch };
  const library = {
    id: libraryId,
    teamId: body.private ? caller.teamId : null,
    title: repo.path[repo.path.length - 1]!,
    source: "git" as const,
    sourceUrl: repo.url.href,
    sourceKey: repo.sourceKey,
    private: Boolean(body.private),
    ownerUserId: caller.userId,
  };
  await store.libraries.createWithJob(library, options, { url: repo.url.href, ...options, teamId: caller.teamId }, body.gitToken);
  return { libraryName: libraryId, message: `Repository ${libraryId} was submitted for processing.` };
}

/** The same source again: a refresh of the library's served branch (under the refresh limits), or nothing if one is pending. */
async function resubmit(ctx: SubmissionContext, library: Library, body: RepositorySubmission): Promise<SubmissionAnswer> {
  const { store } = ctx.volume;
  if (await store.jobs.hasPending(library.id)) {
    return { libraryName: library.id, message: `Repository ${library.id} is already a library and is being processed; nothing was changed.` };
  }
  await ctx.chargeRefresh(library.ownerUserId === ctx.caller.userId);
  const options = await store.libraries.options(library.id);
  await store.libraries.queueJob(library.id, { kind: "refresh", payload: { url: library.sourceUrl!, teamId: ctx.caller.teamId, ...options } }, body.gitToken, true);
  return { libraryName: library.id, message: `Repository ${library.id} is already a library; a refresh was started.` };
}

/** A branch other than the served one: indexed as a pinned version named after it (/owner/repo/<branch>). */
async function addBranch(ctx: SubmissionContext, library: Library, body: RepositorySubmission): Promise<SubmissionAnswer> {
  const { store } = ctx.volume;
  const branch = body.branch!;
  if (!(await store.jobs.hasPending(library.id, branch))) {
    const options = await store.libraries.options(library.id);
    await store.libraries.queueJob(library.id, { kind: "ingest", payload: { url: library.sourceUrl!, teamId: ctx.caller.teamId, ...options, branch, version: branch } }, body.gitToken, false);
  }
  return { libraryName: library.id, message: `Branch ${branch} of ${library.id} was submitted for processing; pin it as ${library.id}/${branch}.` };
}

/** The branch a library serves: as submitted, else as last fetched (the repository's default at the time). */
export async function trackedBranch(store: Store, library: Library): Promise<string | undefined> {
  return (await store.libraries.options(library.id)).branch ?? servedBranch(library);
}

/** The 409 of a library id held by another source; `existing` only when the caller may see that library. */
export function sourceConflict(
  libraryId: string,
  repo: RepositoryUrl,
  existing: Library | undefined,
  hint = `A library's source is fixed when it is created; an operator can move it: ${action("library.move", { id: libraryId })}.`,
): LdsError {
  return new LdsError(
    "source_conflict",
    `The library id ${libraryId} is already taken${existing?.sourceKey ? ` by ${existing.sourceKey}` : " by another source"}; ${repo.sourceKey} cannot replace it. Nothing was changed.`,
    { hint },
  );
}

function checkBranchName(branch: string): void {
  try {
    checkVersionName(branch);
  } catch {
    throw new LdsError("validation_error", `branch "${branch.slice(0, 100)}" is not supported: a branch is pinned by its name, which must be letters, digits, ".", "_" and "-".`, {
      hint: `An operator can index other branches as versions: ${action("library.indexVersion")}.`,
    });
  }
}

function repositoryUrl(raw: string, policy: GitUrlPolicy): RepositoryUrl {
  try {
    return checkRepositoryUrl(raw, policy);
  } catch (err) {
    if (isLdsError(err, "repository_url_invalid")) throw new LdsError("validation_error", `docsRepoUrl: ${err.message}`, { hint: err.hint });
    throw err;
  }
}
