import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { databaseSettingsFromEnv, SQLITE_DATABASE } from "../../src/config/database-settings.js";
import { LdsError } from "../../src/errors.js";
import { tempDir } from "../helpers/temp.js";

const PASSWORD = "s3cr3t-Pa55word";
const URL_ = `postgres://lds:${PASSWORD}@db.internal:6432/lds`;

/** The error a parse throws, with everything it says in one string (to check that the URL is in none of it). */
function refusal(env: NodeJS.ProcessEnv): { error: LdsError; said: string } {
  try {
    databaseSettingsFromEnv(env);
  } catch (err) {
    const error = err as LdsError;
    return { error, said: `${error.message} ${error.hint ?? ""}` };
  }
  throw new Error("the settings were accepted");
}

describe("the database settings (LDS_DATABASE_URL and its companions)", () => {
  it("are SQLite when LDS_DATABASE_URL is absent or blank, whatever else is set", () => {
    expect(databaseSettingsFromEnv({})).toEqual(SQLITE_DATABASE);
    expect(databaseSettingsFromEnv({ LDS_DATABASE_URL: "  ", LDS_DATABASE_POOL_MAX: "oops", LDS_SECRET_KEY_FILE: "/k" })).toEqual({ name: "sqlite" });
  });

  it("with a URL, are PostgreSQL with the defaults: pool 10, connect 5 s, statements 30 s, no TLS; host and port for messages", () => {
    for (const scheme of ["postgres", "postgresql"]) {
      expect(databaseSettingsFromEnv({ LDS_DATABASE_URL: URL_.replace("postgres", scheme), LDS_SECRET_KEY_FILE: "/etc/lds/secret.key" })).toEqual({
        name: "postgres",
        url: URL_.replace("postgres", scheme),
        endpoint: { host: "db.internal", port: 6432 },
        keyFile: "/etc/lds/secret.key",
        poolMax: 10,
        connectTimeoutMs: 5000,
        statementTimeoutMs: 30000,
        tls: { mode: undefined, rootCertFile: undefined },
      });
    }
    expect(databaseSettingsFromEnv({ LDS_DATABASE_URL: "postgres://lds@[::1]/lds", LDS_SECRET_KEY_FILE: "/k" })).toMatchObject({ endpoint: { host: "[::1]", port: 5432 } });
  });

  it("reads the pool size and both timeouts, and refuses values that are not usable, naming the variable", () => {
    const env = { LDS_DATABASE_URL: URL_, LDS_SECRET_KEY_FILE: "/k" };
    expect(databaseSettingsFromEnv({ ...env, LDS_DATABASE_POOL_MAX: "25", LDS_DATABASE_CONNECT_TIMEOUT_MS: "1500", LDS_DATABASE_STATEMENT_TIMEOUT_MS: "60000" })).toMatchObject({
      poolMax: 25,
      connectTimeoutMs: 1500,
      statementTimeoutMs: 60000,
    });
    for (const [name, value] of [
      ["LDS_DATABASE_POOL_MAX", "0"],
      ["LDS_DATABASE_POOL_MAX", "ten"],
      ["LDS_DATABASE_CONNECT_TIMEOUT_MS", "5"],
      ["LDS_DATABASE_STATEMENT_TIMEOUT_MS", "1.5"],
      ["LDS_DATABASE_STATEMENT_TIMEOUT_MS", "-1"],
    ]) {
      const { error, said } = refusal({ ...env, [name]: value });
      expect(error.code).toBe("validation_error");
      expect(error.message).toContain(name!);
      expect(said).not.toContain(PASSWORD);
    }
  });

  it("refuses a URL that is not PostgreSQL's without repeating it", () => {
    for (const url of [`mysql://lds:${PASSWORD}@db/lds`, `db.internal:5432 user=lds password=${PASSWORD}`, `https://lds:${PASSWORD}@db/`]) {
      const { error, said } = refusal({ LDS_DATABASE_URL: url, LDS_SECRET_KEY_FILE: "/k" });
      expect(error.code).toBe("validation_error");
      expect(error.message).toMatch(/^LDS_DATABASE_URL is not a PostgreSQL URL/);
      expect(said).not.toContain(PASSWORD);
      expect(said).not.toContain("db.internal");
    }
  });

  it("requires LDS_SECRET_KEY_FILE with a URL: the key is never created in this mode", () => {
    const { error, said } = refusal({ LDS_DATABASE_URL: URL_ });
    expect(error.code).toBe("validation_error");
    expect(error.message).toMatch(/^LDS_SECRET_KEY_FILE is required with LDS_DATABASE_URL/);
    expect(error.hint).toContain("head -c 32 /dev/urandom");
    expect(said).not.toContain(PASSWORD);
  });

  it("takes TLS from the URL as pg reads it (sslmode, sslrootcert) and refuses modes pg does not honour as named", () => {
    const dir = tempDir();
    const ca = path.join(dir, "ca.pem");
    fs.writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const env = (query: string) => ({ LDS_DATABASE_URL: `${URL_}?${query}`, LDS_SECRET_KEY_FILE: "/k" });
    expect(databaseSettingsFromEnv(env("sslmode=require"))).toMatchObject({ tls: { mode: "require" } });
    expect(databaseSettingsFromEnv(env(`sslmode=verify-full&sslrootcert=${ca}`))).toMatchObject({ tls: { mode: "verify-full", rootCertFile: ca } });
    expect(databaseSettingsFromEnv(env("sslmode=disable"))).toMatchObject({ tls: { mode: "disable" } });
    for (const mode of ["prefer", "verify-ca", "allow", "on"]) {
      const { error, said } = refusal(env(`sslmode=${mode}`));
      expect(error.code).toBe("validation_error");
      expect(error.message).toBe(`LDS_DATABASE_URL asks for sslmode=${mode}, which LDS does not accept.`);
      expect(said).not.toContain(PASSWORD);
    }
    const missing = refusal(env(`sslmode=verify-full&sslrootcert=${dir}/none.pem`));
    expect(missing.error.message).toBe(`The sslrootcert of LDS_DATABASE_URL (${dir}/none.pem) cannot be read (ENOENT).`);
    expect(missing.said).not.toContain(PASSWORD);
  });

  it("takes a CA bundle from LDS_DATABASE_CA_FILE, and refuses it beside TLS parameters in the URL that would replace it", () => {
    const dir = tempDir();
    const ca = path.join(dir, "ca.pem");
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    fs.writeFileSync(ca, pem);
    expect(databaseSettingsFromEnv({ LDS_DATABASE_URL: URL_, LDS_SECRET_KEY_FILE: "/k", LDS_DATABASE_CA_FILE: ca })).toMatchObject({ tls: { ca: pem } });
    const both = refusal({ LDS_DATABASE_URL: `${URL_}?sslmode=require`, LDS_SECRET_KEY_FILE: "/k", LDS_DATABASE_CA_FILE: ca });
    expect(both.error.message).toBe("LDS_DATABASE_CA_FILE and the URL's sslmode both set TLS; the URL's would replace the CA file.");
    expect(both.said).not.toContain(PASSWORD);
    const unreadable = refusal({ LDS_DATABASE_URL: URL_, LDS_SECRET_KEY_FILE: "/k", LDS_DATABASE_CA_FILE: `${dir}/none.pem` });
    expect(unreadable.error.message).toBe(`LDS_DATABASE_CA_FILE (${dir}/none.pem) cannot be read (ENOENT).`);
  });
});
