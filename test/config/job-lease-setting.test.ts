import { expect, it } from "vitest";
import { serverSettingsFromEnv } from "../../src/config/server-settings.js";
import { LdsError } from "../../src/errors.js";

it("LDS_JOB_LEASE_MS: 30 s when unset, a value of 3 s or more as given, and a shorter one refused naming the variable", () => {
  expect(serverSettingsFromEnv({}).jobLeaseMs).toBe(30_000);
  expect(serverSettingsFromEnv({ LDS_JOB_LEASE_MS: "5000" }).jobLeaseMs).toBe(5_000);
  for (const value of ["1000", "soon"]) {
    const error = (() => {
      try {
        serverSettingsFromEnv({ LDS_JOB_LEASE_MS: value });
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(LdsError);
    expect((error as LdsError).message).toMatch(/^LDS_JOB_LEASE_MS must be a whole number of at least 3000/);
  }
});
