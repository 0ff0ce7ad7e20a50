import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/s3-server.js";
import { runCli } from "../helpers/cli.js";

// The CLI is the one place that reads and sets the process environment (cli/main.ts); the S3 driver no longer does.
describe("the CLI's process environment", () => {
  it("keeps the AWS SDK's Node version notice off an operator's stderr when a command makes an S3 client", async () => {
    const port = await freePort(); // nothing listens: the command fails fast, after making its client
    const result = await runCli("lds", ["verify", "s3://bucket/lds-backup-20260101T000000Z.tar", "--s3-endpoint", `http://127.0.0.1:${port}`, "--s3-path-style"], {
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
    });
    expect(result.stderr).toMatch(/^Error: Cannot reach s3:\/\/bucket/m);
    expect(result.stderr).not.toContain("NodeVersionSupportWarning");
  });
});
