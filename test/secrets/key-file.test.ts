import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isLdsError } from "../../src/errors.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { loadOrCreateKey } from "../../src/secrets/key-file.js";
import { getSecret, putSecret } from "../../src/store/sqlite/secrets-table.js";
import { tempDir } from "../helpers/temp.js";
import { dbOf } from "../helpers/sqlite-db.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (isLdsError(err)) return err.code;
    throw err;
  }
  return undefined;
}

describe("secret.key", () => {
  it("is created as 32 random bytes with mode 0600, and read back unchanged", () => {
    const file = path.join(tempDir(), "secret.key");
    const key = loadOrCreateKey(file, false);
    expect(key.length).toBe(32);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKey(file, false).equals(key)).toBe(true);
    expect(loadOrCreateKey(path.join(tempDir(), "secret.key"), false).equals(key)).toBe(false);
  });

  it("is refused when group or world can read it", () => {
    const file = path.join(tempDir(), "secret.key");
    loadOrCreateKey(file, false);
    fs.chmodSync(file, 0o644);
    expect(codeOf(() => loadOrCreateKey(file, false))).toBe("key_insecure");
  });

  it("is refused when it has the wrong size", () => {
    const file = path.join(tempDir(), "secret.key");
    fs.writeFileSync(file, Buffer.alloc(16), { mode: 0o600 });
    expect(codeOf(() => loadOrCreateKey(file, false))).toBe("key_insecure");
  });

  it("is never silently re-created while sealed secrets need the old one", async () => {
    const root = tempDir();
    const volume = await openVolume(root);
    putSecret(dbOf(volume), volume.key, "git", "token-value");
    volume.close();
    fs.rmSync(path.join(root, "secret.key"));
    let message = "";
    try {
      await openVolume(root);
    } catch (err) {
      expect(isLdsError(err, "key_missing")).toBe(true);
      message = (err as Error).message;
    }
    expect(message).toContain("secret.key");
    expect(fs.existsSync(path.join(root, "secret.key"))).toBe(false);
  });

  it("from another volume is detected before any secret is read", async () => {
    const a = tempDir();
    const b = tempDir();
    (await openVolume(a)).close();
    const vb = await openVolume(b);
    putSecret(dbOf(vb), vb.key, "git", "token-value");
    expect(getSecret(dbOf(vb), vb.key, "git")).toBe("token-value");
    vb.close();
    fs.copyFileSync(path.join(a, "secret.key"), path.join(b, "secret.key"));
    expect(
      await openVolume(b).then(
        () => "opened",
        (err: { code?: string }) => err.code,
      ),
    ).toBe("key_missing");
  });
});
