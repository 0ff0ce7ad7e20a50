import { LdsError } from "../errors.js";
import { OPEN_POLICY, type AccessPolicy } from "../search/access-policy.js";
import { accessUnder } from "../search/library-access.js";
import type { Caller } from "../store/records.js";
import type { Store } from "../store/store.js";
import { keyActor } from "./actor.js";
import { changeTeamPolicy } from "./teams.js";

/** A team's policy as GET/PATCH /v2/policies answer it: the policy, and how many libraries its keys may use now. */
export interface PolicyAnswer extends AccessPolicy {
  /** True when the policy narrows anything (search results then carry searchFilterApplied). */
  restrictive: boolean;
  accessibleLibraryCount: number;
}

/** The caller's team policy (GET /v2/policies): team owners and admins only. */
export async function readTeamPolicy(store: Store, caller: Caller): Promise<PolicyAnswer> {
  assertManager(caller);
  return answer(store, caller, (await store.teams.policy(caller.teamId)) ?? OPEN_POLICY);
}

/** Change the caller's team policy (PATCH /v2/policies): the fields the body names replace the current ones. */
export async function updateTeamPolicy(store: Store, caller: Caller, body: unknown): Promise<PolicyAnswer> {
  assertManager(caller);
  // The same change as `lds teams restrict`, recorded under the key that made it.
  const next = await changeTeamPolicy(store, keyActor(caller), caller.teamId, body);
  return answer(store, caller, next);
}

function assertManager(caller: Caller): void {
  if (caller.role === "member") throw new LdsError("forbidden", "Only team owners and admins can read or change the team's access policy.");
}

async function answer(store: Store, caller: Caller, policy: AccessPolicy): Promise<PolicyAnswer> {
  const access = accessUnder(caller, policy);
  const accessible = (await store.libraries.list()).filter((l) => access.canSee(l) && access.mayUse(l));
  return { ...policy, restrictive: access.restricted, accessibleLibraryCount: accessible.length };
}
