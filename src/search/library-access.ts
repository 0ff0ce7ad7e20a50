import { LdsError } from "../errors.js";
import type { Caller } from "../store/records.js";
import type { Store } from "../store/store.js";
import { isRestrictive, OPEN_POLICY, policyMatcher, type AccessPolicy } from "./access-policy.js";
import { action } from "../hints.js";

/** The columns of a library that decide who may read it. */
export interface LibraryVisibility {
  id: string;
  private: boolean;
  teamId: number | null;
}

/**
 * Who is reading: an API caller sees public libraries and its own team's private ones, restricted to the team's
 * allowed list when it has one; an operator at the CLI sees everything.
 */
export interface LibraryAccess {
  /** Whether the library exists for this reader at all (else it is "not found", never "forbidden"). */
  canSee(library: LibraryVisibility): boolean;
  /** Whether the reader's team policy allows it (else access_denied). */
  mayUse(library: { id: string; source: string }): boolean;
  /** Whether a team policy narrows what this reader may use (search results then say so: searchFilterApplied). */
  restricted: boolean;
}

export const OPERATOR_ACCESS: LibraryAccess = { canSee: () => true, mayUse: () => true, restricted: false };

/** A reader without a key, where anonymous reads are on (LDS_PUBLIC_READ): public libraries only. */
export const ANONYMOUS_ACCESS: LibraryAccess = { canSee: (library) => !library.private, mayUse: () => true, restricted: false };

/** An API caller's access, with its team's policy read and compiled once for the request. */
export async function callerAccess(store: Store, caller: Caller): Promise<LibraryAccess> {
  return accessUnder(caller, (await store.teams.policy(caller.teamId)) ?? OPEN_POLICY);
}

/** A caller's access under a given policy (its team's, or one being proposed). */
export function accessUnder(caller: Pick<Caller, "teamId">, policy: AccessPolicy): LibraryAccess {
  return {
    canSee: (library) => !library.private || library.teamId === caller.teamId,
    mayUse: policyMatcher(policy),
    restricted: isRestrictive(policy),
  };
}

export function libraryNotFound(libraryId: string): LdsError {
  return new LdsError("library_not_found", `Library ${libraryId} was not found, or you have no access to it.`, {
    hint: `Find the id (${action("library.list")}), or submit the repository first (${action("library.submit")}).`,
  });
}

export function accessDenied(libraryId: string): LdsError {
  return new LdsError("access_denied", `${libraryId} is not allowed by your team's access policy.`, { hint: `Ask a team owner or admin to allow it (${action("team.policy")}).` });
}
