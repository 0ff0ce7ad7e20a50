import { isRestrictive, OPEN_POLICY, patchPolicy, type AccessPolicy } from "../search/access-policy.js";
import type { Plan, Team } from "../store/records.js";
import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

// Team changes, from `lds teams`, the admin API and PATCH /v2/policies alike: each one audit-logged the same way.

export async function createTeam(store: Store, actor: Actor, name: string, plan: Plan): Promise<Team> {
  const team = await store.teams.create(name, plan);
  await recordAccountChange(store, actor, "team.create", `team:${team.id}`, { name: team.name, plan: team.plan });
  return team;
}

/** The team (by name or id) on another plan; answers it as it is now. */
export async function changeTeamPlan(store: Store, actor: Actor, teamNameOrId: string, plan: Plan): Promise<Team> {
  const team = await store.teams.require(teamNameOrId);
  await store.teams.setPlan(team, plan);
  await recordAccountChange(store, actor, "team.plan", `team:${team.id}`, { from: team.plan, to: plan });
  return { ...team, plan };
}

/** A wiki project the team may submit spaces from (POST /v2/add/wiki checks it). */
export async function addTeamProject(store: Store, actor: Actor, teamNameOrId: string, projectId: string, name: string): Promise<Team> {
  const team = await store.teams.require(teamNameOrId);
  await store.teams.addProject(team.id, projectId, name);
  await recordAccountChange(store, actor, "team.project", `team:${team.id}`, { projectId, name });
  return team;
}

/**
 * Change a team's access policy: the fields `patch` names replace the current ones (search/access-policy.ts checks
 * them); a policy that narrows nothing is stored as none. Answers the policy now in force.
 */
export async function changeTeamPolicy(store: Store, actor: Actor, teamId: number, patch: unknown): Promise<AccessPolicy> {
  const next = patchPolicy((await store.teams.policy(teamId)) ?? OPEN_POLICY, patch);
  await store.teams.setPolicy(teamId, isRestrictive(next) ? next : null);
  await recordAccountChange(store, actor, "team.policy", `team:${teamId}`, { policy: next });
  return next;
}
