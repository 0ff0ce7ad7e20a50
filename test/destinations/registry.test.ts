import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { driverFor, openConfigured, openLocation, openRemoteArchive, registerDriver, settingsFrom } from "../../src/destinations/registry.js";
import { parseBackupConfig } from "../../src/server/backup-config-schema.js";
import { s3Driver } from "../../src/destinations/s3-driver.js";
import { destinationConformance } from "./conformance.js";
import { memoryDriver, stores } from "./memory-driver.js";

// The one line a new driver needs besides its file.
registerDriver(memoryDriver);

destinationConformance("a third driver added through the registry (memory)", async () => {
  const store = randomBytes(4).toString("hex");
  const destination = await openLocation(`mem://${store}`, {}, {});
  return {
    destination,
    async putForeign(name, body) {
      stores.get(store)!.set(name, { body, at: new Date() });
    },
    async listEverything() {
      return [...(stores.get(store)?.keys() ?? [])].sort();
    },
  };
});

describe("the destination registry", () => {
  it("finds a location's driver by its scheme, with paths going to the local driver", async () => {
    expect(driverFor("s3://bucket/prefix").kind).toBe("s3");
    expect(driverFor("mem://x").kind).toBe("memory");
    expect(driverFor("/var/backups/lds").kind).toBe("local");
    expect(driverFor("relative/dir").kind).toBe("local");
    const remote = await openRemoteArchive("mem://store/lds-backup-20260101T000000Z.tar", {}, {});
    expect(remote?.name).toBe("lds-backup-20260101T000000Z.tar");
    expect(remote?.destination.description).toBe("mem://store");
    expect(await openRemoteArchive("/srv/archives/lds-backup-20260101T000000Z.tar", {}, {})).toBeUndefined();
    expect(() => registerDriver(memoryDriver)).toThrow(/registered already/);
  });

  it("the server's configuration takes the new driver's fields and its write-only secret, and opens it", async () => {
    const config = parseBackupConfig({ destination: { type: "memory", store: "abc", token: "t0ken" }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" });
    expect(config.destination).toEqual({ type: "memory", store: "abc", token: "t0ken" });
    expect(() => parseBackupConfig({ destination: { type: "memory" }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" })).toThrow(/destination.store is required/);
    expect(() => parseBackupConfig({ destination: { type: "ftp" }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" })).toThrow(
      /destination.type must be "local" or "memory" or "s3"/,
    );
    const asked: string[] = [];
    const destination = await openConfigured({ type: "memory", store: "abc" }, (key) => (asked.push(key), "t0ken"), { backupsDir: "/unused" });
    expect(destination.description).toBe("mem://abc");
    expect(asked).toEqual(["token"]);
  });

  it("reads a driver's settings from flags, then the environment; a secret never from a flag's value", () => {
    const env = { LDS_S3_REGION: "eu-west-1", LDS_S3_PATH_STYLE: "true", LDS_S3_SECRET_ACCESS_KEY: "from-env" };
    expect(settingsFrom(s3Driver, { s3Region: "us-west-2", s3SecretAccessKey: "ignored-flag" }, env)).toMatchObject({
      region: "us-west-2",
      forcePathStyle: true,
      secretAccessKey: "from-env",
    });
    expect(settingsFrom(s3Driver, {}, env).region).toBe("eu-west-1");
    expect(() => settingsFrom(s3Driver, { s3SecretAccessKeyFile: "/nonexistent/secret" }, {})).toThrow(/--s3-secret-access-key-file/);
  });
});
