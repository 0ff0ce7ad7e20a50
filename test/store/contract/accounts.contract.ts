import { describe, expect, it } from "vitest";
import { bearer, expectLdsError, freshStore, type OpenStore } from "./harness.js";

/** teams, users and apiKeys: names are unique, a removed user's keys stop working, a key's secret is never kept. */
export function describeAccounts(open: OpenStore): void {
  describe("teams", () => {
    const t = freshStore(open);

    it("creates teams with ids, finds them by name or numeric id, lists them by name, and refuses a second of a name", async () => {
      const zeta = await t.store.teams.create("zeta", "free");
      const acme = await t.store.teams.create("acme", "pro");
      expect(zeta).toEqual({ id: expect.any(Number), name: "zeta", plan: "free" });
      expect(acme.id).not.toBe(zeta.id);
      expect(await t.store.teams.find("acme")).toEqual(acme);
      expect(await t.store.teams.find(String(zeta.id))).toEqual(zeta);
      expect(await t.store.teams.find("nobody")).toBeUndefined();
      expect(await t.store.teams.find("999")).toBeUndefined();
      expect(await t.store.teams.list()).toEqual([acme, zeta]);
      await expectLdsError(t.store.teams.create("acme", "free"), "validation_error");
      expect(await t.store.teams.list()).toHaveLength(2);
    });

    it("require answers the team, or team_not_found", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      expect(await t.store.teams.require("acme")).toEqual(acme);
      expect(await t.store.teams.require(String(acme.id))).toEqual(acme);
      await expectLdsError(t.store.teams.require("nobody"), "team_not_found");
    });

    it("changes a plan", async () => {
      const acme = await t.store.teams.create("acme", "free");
      await t.store.teams.setPlan(acme, "enterprise");
      expect((await t.store.teams.require("acme")).plan).toBe("enterprise");
    });

    it("keeps a policy per team: null until set, replaced whole, null again when cleared", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      const other = await t.store.teams.create("other", "pro");
      expect(await t.store.teams.policy(acme.id)).toBeNull();
      const policy = { sourceTypes: ["git" as const], libraries: { allow: ["/acme/*"], deny: ["/acme/secret"] } };
      await t.store.teams.setPolicy(acme.id, policy);
      expect(await t.store.teams.policy(acme.id)).toEqual(policy);
      expect(await t.store.teams.policy(other.id)).toBeNull();
      await t.store.teams.setPolicy(acme.id, { sourceTypes: ["wiki"], libraries: { allow: null, deny: [] } });
      expect(await t.store.teams.policy(acme.id)).toEqual({ sourceTypes: ["wiki"], libraries: { allow: null, deny: [] } });
      await t.store.teams.setPolicy(acme.id, null);
      expect(await t.store.teams.policy(acme.id)).toBeNull();
    });

    it("records a team's projects (adding one again renames it) and answers whether it has one", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      const other = await t.store.teams.create("other", "pro");
      expect(await t.store.teams.hasProject(acme.id, "p-1")).toBe(false);
      await t.store.teams.addProject(acme.id, "p-1", "Docs");
      await t.store.teams.addProject(acme.id, "p-1", "Docs, renamed");
      expect(await t.store.teams.hasProject(acme.id, "p-1")).toBe(true);
      expect(await t.store.teams.hasProject(other.id, "p-1")).toBe(false);
    });

    it("createFirst makes a team, its owner and a working key on a store without teams, and null once teams exist", async () => {
      const first = await t.store.teams.createFirst({ team: "acme", email: "owner@acme.test", plan: "pro" });
      expect(first).toEqual({ team: "acme", plan: "pro", email: "owner@acme.test", key: expect.stringMatching(/^ldssk-/), prefix: expect.stringMatching(/^ldssk-/) });
      expect(first!.key.startsWith(`${first!.prefix}.`)).toBe(true);
      const caller = await t.store.apiKeys.authenticate(bearer(first!.key));
      expect(caller).toMatchObject({ keyPrefix: first!.prefix, email: "owner@acme.test", role: "owner", plan: "pro" });
      expect(await t.store.teams.createFirst({ team: "second", email: "b@b.test", plan: "free" })).toBeNull();
      expect((await t.store.teams.list()).map((x) => x.name)).toEqual(["acme"]);
    });

    it("createFirst is all or nothing: a bad owner email leaves no team behind", async () => {
      await expectLdsError(t.store.teams.createFirst({ team: "acme", email: "not an email", plan: "pro" }), "validation_error");
      expect(await t.store.teams.list()).toEqual([]);
      expect(await t.store.apiKeys.hasActive()).toBe(false);
      expect(await t.store.teams.createFirst({ team: "acme", email: "owner@acme.test", plan: "pro" })).not.toBeNull();
    });

    it("createFirst asked several times at once makes one team: the others answer null", async () => {
      const callers = [1, 2, 3, 4];
      // Teams listed at once first: an engine with a pool of connections has one open per caller, so that the
      // first runs below really run side by side.
      expect(await Promise.all(callers.map(() => t.store.teams.list()))).toEqual(callers.map(() => []));
      const made = await Promise.all(callers.map((n) => t.store.teams.createFirst({ team: `team-${n}`, email: `owner@${n}.test`, plan: "free" })));
      expect(made.filter((first) => first !== null)).toHaveLength(1);
      expect(await t.store.teams.list()).toHaveLength(1);
      expect(await t.store.users.list()).toHaveLength(1);
    });
  });

  describe("users", () => {
    const t = freshStore(open);

    it("adds users to teams, requires them by email (user_not_found otherwise), and lists them by team name then email", async () => {
      const zeta = await t.store.teams.create("zeta", "free");
      const acme = await t.store.teams.create("acme", "pro");
      const z = await t.store.users.add(zeta, "a@zeta.test", "member");
      const b = await t.store.users.add(acme, "b@acme.test", "admin");
      const a = await t.store.users.add(acme, "a@acme.test", "owner");
      expect(a).toEqual({ id: expect.any(Number), teamId: acme.id, email: "a@acme.test", role: "owner" });
      expect(await t.store.users.require("b@acme.test")).toEqual(b);
      await expectLdsError(t.store.users.require("nobody@acme.test"), "user_not_found");
      expect(await t.store.users.list()).toEqual([
        { ...a, team: "acme" },
        { ...b, team: "acme" },
        { ...z, team: "zeta" },
      ]);
    });

    it("refuses a malformed email and a second user of an email", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      await expectLdsError(t.store.users.add(acme, "no-at-sign", "member"), "validation_error");
      await t.store.users.add(acme, "a@acme.test", "member");
      await expectLdsError(t.store.users.add(acme, "a@acme.test", "admin"), "validation_error");
      expect(await t.store.users.list()).toHaveLength(1);
    });

    it("the same email added several times at once makes one user: the others are validation_error", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      const added = await Promise.allSettled([1, 2, 3, 4].map(() => t.store.users.add(acme, "a@acme.test", "member")));
      expect(added.filter((a) => a.status === "fulfilled")).toHaveLength(1);
      for (const refused of added.filter((a) => a.status === "rejected")) expect(refused.reason).toMatchObject({ code: "validation_error" });
      expect(await t.store.users.list()).toHaveLength(1);
    });

    it("removes a user (gone from require and list; user_not_found when removed twice) and brings it back with the team and role given then, under the same id", async () => {
      const acme = await t.store.teams.create("acme", "pro");
      const other = await t.store.teams.create("other", "pro");
      const user = await t.store.users.add(acme, "a@acme.test", "admin");
      expect(await t.store.users.remove("a@acme.test")).toEqual(user);
      await expectLdsError(t.store.users.require("a@acme.test"), "user_not_found");
      await expectLdsError(t.store.users.remove("a@acme.test"), "user_not_found");
      expect(await t.store.users.list()).toEqual([]);
      const back = await t.store.users.add(other, "a@acme.test", "member");
      expect(back).toEqual({ id: user.id, teamId: other.id, email: "a@acme.test", role: "member" });
      expect(await t.store.users.require("a@acme.test")).toEqual(back);
    });
  });

  describe("apiKeys", () => {
    const t = freshStore(open);
    const owner = async () => {
      const team = await t.store.teams.create("acme", "pro");
      return { team, user: await t.store.users.add(team, "a@acme.test", "owner") };
    };

    it("creates a key shown once and authenticates it (the Bearer scheme in any case) as its user's caller", async () => {
      const { team, user } = await owner();
      expect(await t.store.apiKeys.hasActive()).toBe(false);
      const { key, prefix } = await t.store.apiKeys.create(user.id, "laptop");
      expect(key).toMatch(/^ldssk-[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/);
      expect(key.startsWith(`${prefix}.`)).toBe(true);
      expect(await t.store.apiKeys.hasActive()).toBe(true);
      const caller = { keyPrefix: prefix, userId: user.id, email: user.email, role: "owner", teamId: team.id, plan: "pro" };
      expect(await t.store.apiKeys.authenticate(bearer(key))).toEqual(caller);
      expect(await t.store.apiKeys.authenticate(`bearer ${key}`)).toEqual(caller);
    });

    it("answers invalid_api_key for a missing, malformed, unknown or wrong key, whichever part is wrong", async () => {
      const { user } = await owner();
      const { key, prefix } = await t.store.apiKeys.create(user.id, null);
      const secret = key.slice(prefix.length + 1);
      const otherSecret = secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A");
      await expectLdsError(t.store.apiKeys.authenticate(undefined), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(""), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(key), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(`Basic ${key}`), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(bearer("ldssk-nothex.short")), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(bearer(`${prefix}.${otherSecret}`)), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.authenticate(bearer(`ldssk-000000000000.${secret}`)), "invalid_api_key");
      // Nor does the answer tell an unknown prefix from a wrong secret or a revoked key.
      const revoked = await t.store.apiKeys.create(user.id, null);
      await t.store.apiKeys.revoke(revoked.prefix);
      const messages = await Promise.all(
        [bearer(`ldssk-000000000000.${secret}`), bearer(`${prefix}.${otherSecret}`), bearer(revoked.key)].map((h) => t.store.apiKeys.authenticate(h).catch((err: Error) => err.message)),
      );
      expect(new Set(messages).size).toBe(1);
    });

    it("a revoked key stops working; revoking it again, or an unknown prefix, is validation_error", async () => {
      const { user } = await owner();
      const kept = await t.store.apiKeys.create(user.id, "kept");
      const { key, prefix } = await t.store.apiKeys.create(user.id, "lost");
      await t.store.apiKeys.revoke(prefix);
      await expectLdsError(t.store.apiKeys.authenticate(bearer(key)), "invalid_api_key");
      await expectLdsError(t.store.apiKeys.revoke(prefix), "validation_error");
      await expectLdsError(t.store.apiKeys.revoke("ldssk-000000000000"), "validation_error");
      expect(await t.store.apiKeys.hasActive()).toBe(true);
      await t.store.apiKeys.revoke(kept.prefix);
      expect(await t.store.apiKeys.hasActive()).toBe(false);
    });

    it("a removed user's keys answer user_not_found, and work again once the user is added back", async () => {
      const { team, user } = await owner();
      const { key } = await t.store.apiKeys.create(user.id, null);
      await t.store.users.remove(user.email);
      await expectLdsError(t.store.apiKeys.authenticate(bearer(key)), "user_not_found");
      await t.store.users.add(team, user.email, "member");
      expect(await t.store.apiKeys.authenticate(bearer(key))).toMatchObject({ userId: user.id, role: "member" });
    });

    it("lists keys with their user's email and when they were created and revoked, never their secret", async () => {
      const { user } = await owner();
      const laptop = await t.store.apiKeys.create(user.id, "laptop");
      const ci = await t.store.apiKeys.create(user.id, null);
      await t.store.apiKeys.revoke(ci.prefix);
      const listed = await t.store.apiKeys.list();
      expect([...listed].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""))).toEqual([
        { prefix: ci.prefix, name: null, email: user.email, createdAt: expect.any(String), revokedAt: expect.any(String) },
        { prefix: laptop.prefix, name: "laptop", email: user.email, createdAt: expect.any(String), revokedAt: null },
      ]);
      const text = JSON.stringify(listed);
      for (const { key, prefix } of [laptop, ci]) expect(text).not.toContain(key.slice(prefix.length + 1));
    });
  });
}
