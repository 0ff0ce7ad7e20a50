import { LdsError } from "../../../src/errors.js";
import type { Team, User } from "../../../src/store/records.js";
import type { TeamStore, UserStore } from "../../../src/store/store.js";
import { createApiKey } from "./api-keys.js";
import { copy, nextId, type MemoryTables } from "./tables.js";

const EMAIL = /^[^@\s]+@[^@\s]+$/;

export function teamStore(tables: MemoryTables): TeamStore {
  const find = (nameOrId: string): Team | undefined => {
    const all = [...tables.teams.values()];
    const team = all.find((t) => t.name === nameOrId) ?? (/^\d+$/.test(nameOrId) ? tables.teams.get(Number(nameOrId)) : undefined);
    return team && { id: team.id, name: team.name, plan: team.plan };
  };
  const create = (name: string, plan: Team["plan"]): Team => {
    if (find(name)?.name === name) throw new LdsError("validation_error", `A team named ${name} already exists.`);
    const id = nextId(tables, "teams");
    tables.teams.set(id, { id, name, plan, policy: null });
    return { id, name, plan };
  };
  return {
    create: async (name, plan) => create(name, plan),
    find: async (nameOrId) => find(nameOrId),
    require: async (nameOrId) => {
      const team = find(nameOrId);
      if (!team) throw new LdsError("team_not_found", `No team ${nameOrId}.`);
      return team;
    },
    list: async () => [...tables.teams.values()].map(({ id, name, plan }) => ({ id, name, plan })).sort((a, b) => compare(a.name, b.name)),
    setPlan: async (team, plan) => {
      const stored = tables.teams.get(team.id);
      if (stored) stored.plan = plan;
    },
    policy: async (teamId) => copy(tables.teams.get(teamId)?.policy ?? null),
    setPolicy: async (teamId, policy) => {
      const stored = tables.teams.get(teamId);
      if (stored) stored.policy = copy(policy);
    },
    addProject: async (teamId, projectId, name) => void tables.projects.set(`${teamId} ${projectId}`, name),
    hasProject: async (teamId, projectId) => tables.projects.has(`${teamId} ${projectId}`),
    createFirst: async (first) => {
      if (tables.teams.size > 0) return null;
      // Checked before anything is written: a bad email leaves no team behind.
      if (!EMAIL.test(first.email)) throw invalidEmail(first.email);
      const team = create(first.team, first.plan);
      const user = addUser(tables, team, first.email, "owner");
      const { key, prefix } = createApiKey(tables, user.id, "created by lds init");
      return { team: team.name, plan: team.plan, email: user.email, key, prefix };
    },
  };
}

function addUser(tables: MemoryTables, team: Team, email: string, role: User["role"]): User {
  if (!EMAIL.test(email)) throw invalidEmail(email);
  const existing = [...tables.users.values()].find((u) => u.email === email);
  if (existing && !existing.removed) throw new LdsError("validation_error", `A user ${email} already exists.`);
  // A removed user comes back with the team and role given now (and its old keys work again).
  const id = existing?.id ?? nextId(tables, "users");
  tables.users.set(id, { id, teamId: team.id, email, role, removed: false });
  return { id, teamId: team.id, email, role };
}

const invalidEmail = (email: string) => new LdsError("validation_error", `"${email}" is not an email address.`);

export function userStore(tables: MemoryTables): UserStore {
  const require = (email: string): User => {
    const user = [...tables.users.values()].find((u) => u.email === email && !u.removed);
    if (!user) throw new LdsError("user_not_found", `No user ${email}.`);
    return { id: user.id, teamId: user.teamId, email: user.email, role: user.role };
  };
  return {
    add: async (team, email, role) => addUser(tables, team, email, role),
    require: async (email) => require(email),
    remove: async (email) => {
      const user = require(email);
      tables.users.get(user.id)!.removed = true;
      return user;
    },
    list: async () =>
      [...tables.users.values()]
        .filter((u) => !u.removed)
        .map((u) => ({ id: u.id, teamId: u.teamId, email: u.email, role: u.role, team: tables.teams.get(u.teamId)!.name }))
        .sort((a, b) => compare(a.team, b.team) || compare(a.email, b.email)),
  };
}

/** Byte order, as SQLite's default collation sorts text. */
export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
