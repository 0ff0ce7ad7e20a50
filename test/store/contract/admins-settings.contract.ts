import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectLdsError, freshStore, type OpenStore } from "./harness.js";

/** The setting that records the fingerprint of the key the secrets are sealed with (resealSecrets writes it). */
const FINGERPRINT_SETTING = "secret_key.fingerprint";

/** admins (sessions kept as digests), settings and sealed secrets, key rotation, and the schema version. */
export function describeAdminsAndSettings(open: OpenStore): void {
  describe("admins", () => {
    const t = freshStore(open);

    it("creates admins with valid, unique usernames, finds and counts them", async () => {
      expect(await t.store.admins.count()).toBe(0);
      const id = await t.store.admins.create("root@ops", "hash-1");
      expect(await t.store.admins.find("root@ops")).toEqual({ id, username: "root@ops", passwordHash: "hash-1" });
      expect(await t.store.admins.find("nobody")).toBeUndefined();
      await expectLdsError(t.store.admins.create("root@ops", "hash-2"), "validation_error");
      await expectLdsError(t.store.admins.create("has space", "hash-2"), "validation_error");
      await expectLdsError(t.store.admins.create("", "hash-2"), "validation_error");
      await expectLdsError(t.store.admins.create("x".repeat(65), "hash-2"), "validation_error");
      expect(await t.store.admins.create("second", "hash-2")).not.toBe(id);
      expect(await t.store.admins.count()).toBe(2);
    });

    it("the first admin is created once, by one of several callers at once, and never beside another admin", async () => {
      const ids = await Promise.all(["first-a", "first-b", "first-c", "first-d"].map((name) => t.store.admins.createFirst(name, `hash-${name}`)));
      const made = ids.filter((id) => id !== undefined);
      expect(made).toHaveLength(1);
      expect(await t.store.admins.count()).toBe(1);
      expect(await t.store.admins.createFirst("later", "hash")).toBeUndefined();
      expect(await t.store.admins.find("later")).toBeUndefined();
    });

    it("the first admin's username is checked like any other", async () => {
      await expectLdsError(t.store.admins.createFirst("has space", "hash"), "validation_error");
      expect(await t.store.admins.count()).toBe(0);
    });

    it("a session's token names its admin until deleted or expired; an unknown token names nobody", async () => {
      const id = await t.store.admins.create("root", "hash");
      const before = Date.now();
      const session = await t.store.admins.createSession(id, 3600);
      expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(session.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3600_000);
      expect(await t.store.admins.sessionAdmin(session.token)).toEqual({ id, username: "root" });
      expect(await t.store.admins.sessionAdmin("not-a-session")).toBeUndefined();
      const expired = await t.store.admins.createSession(id, -1);
      expect(await t.store.admins.sessionAdmin(expired.token)).toBeUndefined();
      await t.store.admins.deleteSession(session.token);
      expect(await t.store.admins.sessionAdmin(session.token)).toBeUndefined();
    });
  });

  describe("settings", () => {
    const t = freshStore(open);

    it("gets and sets settings, the last value winning", async () => {
      expect(await t.store.settings.get("ui.theme")).toBeUndefined();
      await t.store.settings.set("ui.theme", "dark");
      await t.store.settings.set("ui.theme", "light");
      expect(await t.store.settings.get("ui.theme")).toBe("light");
    });

    it("puts a setting only when it has none, answering the value it has; of puts at once, one wins for all", async () => {
      expect(await t.store.settings.putIfAbsent("fp", "first")).toBe("first");
      expect(await t.store.settings.putIfAbsent("fp", "second")).toBe("first");
      expect(await t.store.settings.get("fp")).toBe("first");
      const answers = await Promise.all(["a", "b", "c", "d", "e", "f"].map((value) => t.store.settings.putIfAbsent("race", value)));
      expect(new Set(answers).size).toBe(1);
      expect(["a", "b", "c", "d", "e", "f"]).toContain(answers[0]);
      expect(await t.store.settings.get("race")).toBe(answers[0]);
    });

    it("prunes the settings of a series keyed by time before a bound, and nothing outside the series", async () => {
      for (const at of ["2026-11-27T23:00:00.000Z", "2026-11-28T00:00:00.000Z", "2026-11-28T01:00:00.000Z"]) await t.store.settings.set(`backup.slot.schedule.${at}`, "replica");
      await t.store.settings.set("backup.slot.drill.2026-11-27T04:30:00.000Z", "replica");
      // Keys that sort around the series' prefix: a shorter one, a longer family, and one a locale would mix in.
      for (const key of ["backup.slot.schedule", "backup.slot.schedule-x", "backup.slot.schedulf", "backup.config"]) await t.store.settings.set(key, "kept");
      expect(await t.store.settings.pruneBefore("backup.slot.schedule.", "2026-11-28T01:00:00.000Z")).toBe(2);
      expect(await t.store.settings.get("backup.slot.schedule.2026-11-27T23:00:00.000Z")).toBeUndefined();
      expect(await t.store.settings.get("backup.slot.schedule.2026-11-28T00:00:00.000Z")).toBeUndefined();
      expect(await t.store.settings.get("backup.slot.schedule.2026-11-28T01:00:00.000Z")).toBe("replica");
      expect(await t.store.settings.get("backup.slot.drill.2026-11-27T04:30:00.000Z")).toBe("replica");
      for (const key of ["backup.slot.schedule", "backup.slot.schedule-x", "backup.slot.schedulf", "backup.config"]) expect(await t.store.settings.get(key)).toBe("kept");
      expect(await t.store.settings.pruneBefore("backup.slot.schedule.", "2026-11-28T00:00:00.000Z")).toBe(0);
    });

    it("saves a setting with its secrets: a value given is sealed, '' removes one, undefined keeps one", async () => {
      await t.store.settings.saveWithSecrets("s3", '{"bucket":"b"}', [
        { name: "s3:access", value: "AKIA-1" },
        { name: "s3:secret", value: "shh-1" },
      ]);
      expect(await t.store.settings.get("s3")).toBe('{"bucket":"b"}');
      expect(await t.store.settings.secret("s3:access")).toBe("AKIA-1");
      expect(await t.store.settings.hasSecret("s3:secret")).toBe(true);
      await t.store.settings.saveWithSecrets("s3", '{"bucket":"c"}', [
        { name: "s3:access", value: undefined },
        { name: "s3:secret", value: "" },
      ]);
      expect(await t.store.settings.get("s3")).toBe('{"bucket":"c"}');
      expect(await t.store.settings.secret("s3:access")).toBe("AKIA-1");
      expect(await t.store.settings.hasSecret("s3:secret")).toBe(false);
      expect(await t.store.settings.secret("s3:secret")).toBeUndefined();
      expect(await t.store.settings.secret("never-set")).toBeUndefined();
      // A secret is not a setting: sealed apart, never read back through get().
      expect(await t.store.settings.get("s3:access")).toBeUndefined();
    });

    it("resealSecrets re-seals every secret with the new key and records its fingerprint: the old key no longer opens them", async () => {
      await t.store.settings.saveWithSecrets("s", "v", [
        { name: "a", value: "alpha" },
        { name: "b", value: "beta" },
      ]);
      expect(await t.store.settings.resealSecrets(randomBytes(32), "fp-new")).toBe(2);
      expect(await t.store.settings.get(FINGERPRINT_SETTING)).toBe("fp-new");
      expect(await t.store.settings.hasSecret("a")).toBe(true);
      // This store still holds the old key: what it unseals now fails as tampered, never as the wrong plain text.
      await expectLdsError(t.store.settings.secret("a"), "secret_tampered");
    });

    it("resealSecrets with no secret answers 0 and still records the fingerprint", async () => {
      expect(await t.store.settings.resealSecrets(randomBytes(32), "fp-empty")).toBe(0);
      expect(await t.store.settings.get(FINGERPRINT_SETTING)).toBe("fp-empty");
    });

    it("answers a positive schema version", async () => {
      const version = await t.store.schemaVersion();
      expect(Number.isInteger(version) && version > 0).toBe(true);
    });
  });
}
