import type { GitUrlPolicy } from "../config/git-settings.js";
import { checkRepositoryUrl, gitLibraryId } from "../sources/git-url.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { sourceConflict, trackedBranch } from "./submit-repository.js";
import { checkVersionName } from "./version-name.js";
import { action } from "../hints.js";

export interface IngestTarget {
  libraryId: string;
  /** The ref to fetch: a branch or tag; undefined for the repository's default branch. */
  branch?: string;
  /** Set when the ref is indexed as a pinned version rather than as the library's current content. */
  version?: string;
}

/**
 * What `lds ingest git URL [--branch B | --tag T]` indexes, with the same rules as a submission: the library of
 * this source (created public on first use), never one whose id another source holds; a branch other than the one
 * the library serves is added as a pinned version instead of switching it (`lds libraries move` switches).
 */
export async function resolveIngestTarget(volume: OpenVolume, rawUrl: string, policy: GitUrlPolicy, ref: { branch?: string; tag?: string; versionName?: string }): Promise<IngestTarget> {
  const { store } = volume;
  const repo = checkRepositoryUrl(rawUrl, policy);
  const bySource = await store.libraries.bySource(repo.sourceKey);
  let library = bySource.find((l) => !l.private) ?? (bySource.length === 1 ? bySource[0] : undefined);
  if (!library) {
    const id = gitLibraryId(repo, { defaultHost: policy.defaultHost });
    const taken = await store.libraries.find(id);
    if (taken) throw sourceConflict(id, repo, taken, `To move ${id} to this repository: ${action("library.move", { id, to: repo.url.href })}.`);
    await store.libraries.create({ id, teamId: null, title: repo.path[repo.path.length - 1]!, source: "git", sourceUrl: repo.url.href, sourceKey: repo.sourceKey, private: false, ownerUserId: null });
    library = (await store.libraries.find(id))!;
  }
  if (ref.tag !== undefined) {
    const version = ref.versionName ?? ref.tag;
    checkVersionName(version);
    return { libraryId: library.id, branch: ref.tag, version };
  }
  const served = await trackedBranch(store, library);
  if (ref.branch !== undefined && served !== undefined && ref.branch !== served) {
    checkVersionName(ref.branch);
    return { libraryId: library.id, branch: ref.branch, version: ref.branch };
  }
  return { libraryId: library.id, branch: ref.branch ?? served };
}
