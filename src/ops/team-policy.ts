import { LdsError } from "../errors.js";
import { isRestrictive, OPEN_POLICY, patchPolicy, type AccessPolicy } from "../search/access-policy.js";
import { accessUnder } from "../search/library-access.js";
import type { Caller } from "../store/api-keys.js";
import type { Store } from "../store/store.js";

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
  const next = patchPolicy((await store.teams.policy(caller.teamId)) ?? OPEN_POLICY, body);
  await store.teams.setPolicy(caller.teamId, isRestrictive(next) ? next : null);
  await store.audit.record({ actor: `key:${caller.keyPrefix}`, action: "team.policy", subject: `team:${caller.teamId}`, details: { policy: next } });
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
