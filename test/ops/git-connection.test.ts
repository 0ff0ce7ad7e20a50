import { afterEach, describe, expect, it } from "vitest";
import { connectedGitAuth } from "../../src/ops/git-connection.js";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";

let volume: OpenVolume | undefined;
afterEach(() => volume?.close());

describe("a connected git account's token after a host refused it", () => {
  it("is not renewed, and the grant stays connected, when the grant has no refresh token", async () => {
    // GitHub's OAuth apps hand out tokens without refresh tokens; a 403 from a git host may only mean that the account
    // may not read that repository, so the refusal must stand without marking the grant revoked.
    volume = await openVolume(tempDir("lds-git-connection-"));
    const { store } = volume;
    const team = await store.teams.create("docs", "enterprise");
    const grantId = await store.oauth.saveGrant({
      teamId: team.id,
      provider: "github",
      account: "octo-dev",
      scopes: "repo",
      tokens: { accessToken: "gho_not_refreshable" },
      target: { kind: "git", hosts: ["git.internal.test"] },
    });
    const auth = await connectedGitAuth(store, team.id, "git.internal.test", undefined);
    expect(auth.token).toBe("gho_not_refreshable");
    expect(auth.renew).toBeDefined();
    expect(await auth.renew!()).toBeUndefined();
    expect((await store.oauth.find(grantId))?.state).toBe("active");
  });
});
