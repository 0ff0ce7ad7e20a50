import { describe, expect, it } from "vitest";
import { takeAdminPassword } from "../../src/config/admin-password.js";
import { redactToken } from "../../src/util/redact.js";

describe("redacting a token from a message others read (item 14)", () => {
  it("replaces the token where it stands as a token, never inside other words or addresses", () => {
    expect(redactToken("fatal: unable to access 'http://127.0.0.1:9/acme/x.git/': Failed to connect to 127.0.0.1 port 9", "0")).toBe(
      "fatal: unable to access 'http://127.0.0.1:9/acme/x.git/': Failed to connect to 127.0.0.1 port 9",
    );
    expect(redactToken("remote: token ghp_abc123 is not valid; 0 attempts left", "ghp_abc123")).toBe("remote: token [redacted] is not valid; 0 attempts left");
    expect(redactToken("Authorization failed for x-access-token:s3cr3t@host", "s3cr3t")).toBe("Authorization failed for x-access-token:[redacted]@host");
    expect(redactToken("a.b+c", "a.b+c")).toBe("[redacted]");
    expect(redactToken("nothing here", undefined)).toBe("nothing here");
  });

  it("reads the admin password once and removes it from the environment children would inherit", () => {
    const env: NodeJS.ProcessEnv = { LDS_ADMIN_PASSWORD: "correct horse battery staple" };
    expect(takeAdminPassword(env)).toBe("correct horse battery staple");
    expect(env.LDS_ADMIN_PASSWORD).toBeUndefined();
    expect(() => takeAdminPassword({ LDS_ADMIN_PASSWORD_FILE: "/nonexistent/lds-password" })).toThrow(/LDS_ADMIN_PASSWORD_FILE \/nonexistent\/lds-password cannot be read \(ENOENT\)/);
  });
});
