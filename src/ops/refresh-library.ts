import { LdsError } from "../errors.js";
import { accessDenied, callerAccess } from "../search/library-access.js";
import { findVisibleExactly } from "../search/visible-library.js";
import type { Caller, JobPayload } from "../store/records.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { trackedBranch } from "./submit-repository.js";
import { wikiPayloadOf } from "./submit-wiki.js";
import { action } from "../hints.js";

export interface RefreshRequest {
  libraryName: string;
  branch?: string;
  gitToken?: string;
}

/**
 * Refresh a library (POST /v1/refresh). Without `branch`, or with the branch the library serves, its current
 * content is fetched again; with a branch added to it (a pinned version), that version is. Any other branch is
 * branch_not_found, naming the branches the library has.
 */
export async function refreshLibrary(volume: OpenVolume, caller: Caller, request: RefreshRequest, chargeRefresh: (isOwner: boolean) => Promise<void>): Promise<{ message: string }> {
  const { store } = volume;
  const { libraryName, branch, gitToken } = request;
  // The same visibility rules as search and context: another team's private library does not exist for the caller,
  // and the old id of one of its own renamed libraries answers 301 with the new one.
  const access = await callerAccess(store, caller);
  const library = await findVisibleExactly(
    store,
    access,
    libraryName,
    () => new LdsError("library_not_found", `No library ${libraryName} (or no access to it).`, { hint: `Submit it first: ${action("library.submit")}.` }),
  );
  if (!access.mayUse(library)) throw accessDenied(libraryName);
  if (library.private && caller.plan === "free") throw new LdsError("forbidden", "Private sources require a Pro or Enterprise plan.");

  let payload: JobPayload;
  if (library.source === "wiki") {
    if (branch) throw new LdsError("branch_not_found", `${libraryName} is a wiki space: it has no branches.`);
    payload = wikiPayloadOf(library.sourceUrl!, library.teamId ?? caller.teamId);
  } else {
    const options = await store.libraries.options(library.id);
    const served = await trackedBranch(store, library);
    const versions = await store.versions.list(library.id);
    const added = versions.find((v) => v.name === branch || v.ref === branch);
    if (branch && branch !== served && !added) {
      const names = [served ?? "(default branch)", ...versions.map((v) => v.name)];
      throw new LdsError("branch_not_found", `The branch "${branch}" is not part of ${libraryName}; its branches: ${names.join(", ")}.`, {
        hint: `Add it: ${action("library.addBranch", { branch })}.`,
      });
    }
    payload = { url: library.sourceUrl!, teamId: caller.teamId, ...options };
    if (branch && branch !== served && added) Object.assign(payload, { branch: added.ref, version: added.name });
  }
  await chargeRefresh(library.ownerUserId === caller.userId);
  await store.jobs.enqueue({ libraryId: library.id, kind: "refresh", payload }, gitToken);
  return { message: `Refresh of ${libraryName}${branch ? ` (${branch})` : ""} started.` };
}
