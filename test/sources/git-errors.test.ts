import { describe, expect, it } from "vitest";
import { gitError } from "../../src/sources/git.js";

// git's own messages, as it prints them for a clone over HTTPS.
const at = (port: number) => ({ url: new URL(`https://127.0.0.1:${port}/acme/docs.git`) });
const quoted = (port: number) => `'https://127.0.0.1:${port}/acme/docs.git/'`;

describe("what a failed git command is reported as", () => {
  it("reads an untrusted certificate as such, whatever digits the URL's port holds", () => {
    for (const port of [40312, 44013, 51404, 8443]) {
      const error = gitError(`Cloning into bare repository 'x'...\nfatal: unable to access ${quoted(port)}: SSL certificate problem: unable to get local issuer certificate\n`, at(port));
      expect(error.code, String(port)).toBe("repository_unreachable");
      expect(error.hint).toMatch(/certificate is not trusted here/);
    }
  });

  it("reads the HTTP status git reports, and only that, as refused or missing", () => {
    const port = 40312;
    expect(gitError(`fatal: unable to access ${quoted(port)}: The requested URL returned error: 403\n`, at(port)).code).toBe("repository_auth_failed");
    expect(gitError(`error: RPC failed; HTTP 401 curl 22 The requested URL returned error: 401\n`, at(port)).code).toBe("repository_auth_failed");
    expect(gitError(`fatal: could not read Username for ${quoted(port)}: terminal prompts disabled\n`, at(port)).code).toBe("repository_auth_failed");
    expect(gitError(`fatal: unable to access ${quoted(port)}: The requested URL returned error: 404\n`, at(port)).code).toBe("repository_not_found");
    expect(gitError(`fatal: unable to access ${quoted(40412)}: Failed to connect to 127.0.0.1 port 40412: Connection refused\n`, at(40412)).code).toBe("repository_unreachable");
  });

  it("tells a token the host refuses (401) from a token without access to the repository (403), each with its fix", () => {
    const port = 40312;
    const withToken = { ...at(port), token: "t0k3n-value" };
    const refused = gitError(`error: RPC failed; HTTP 401 curl 22 The requested URL returned error: 401\n`, withToken);
    const forbidden = gitError(`fatal: unable to access ${quoted(port)}: The requested URL returned error: 403\n`, withToken);
    expect(refused.message).toBe(`127.0.0.1:${port}/acme/docs.git refused access with the given token.`);
    expect(refused.hint).toMatch(/did not accept the token \(mistyped, expired or revoked\): create a new one/);
    expect(forbidden.message).toBe(`127.0.0.1:${port}/acme/docs.git refused access (HTTP 403) to the given token.`);
    expect(forbidden.hint).toMatch(/accepted the token but it may not read this repository: give the token \(or its account\) read access/);
    const anonymous = gitError(`fatal: unable to access ${quoted(port)}: The requested URL returned error: 403\n`, at(port));
    expect(anonymous.message).toMatch(/refused access \(HTTP 403\) without a token\.$/);
    expect(anonymous.hint).toMatch(/pass a gitToken or connect an account/);
    for (const error of [refused, forbidden, anonymous]) expect(`${error.message} ${error.hint}`).not.toContain("t0k3n-value");
  });
});
