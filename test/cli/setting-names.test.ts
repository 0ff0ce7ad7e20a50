import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliSettingName } from "../../src/cli/setting-names.js";
import { renderHint } from "../../src/errors.js";
import { ROOT } from "../helpers/cli.js";

/** Every setting key a hint in src/ names with setting("…"). */
function keysUsed(): string[] {
  const keys = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) for (const m of fs.readFileSync(full, "utf8").matchAll(/\bsetting\("([^"]+)"\)/g)) keys.add(m[1]!);
    }
  };
  walk(path.join(ROOT, "src"));
  return [...keys].sort();
}

describe("settings named in hints (issue 12: messages name settings, shells render them)", () => {
  it("the CLI names every setting a hint refers to by its flag and environment variable", () => {
    const keys = keysUsed();
    expect(keys).toEqual(expect.arrayContaining(["dataDir", "s3.region", "s3.secretAccessKey"]));
    expect(keys.filter((key) => cliSettingName(key) === undefined)).toEqual([]);
    expect(renderHint("Set the bucket's region ({s3.region}).", cliSettingName)).toBe("Set the bucket's region (--s3-region or LDS_S3_REGION).");
    expect(renderHint("Point {dataDir} at a directory.", cliSettingName)).toBe("Point --data-dir or LDS_DATA_DIR at a directory.");
    expect(renderHint("({s3.secretAccessKey}) ({s3.bucket})", cliSettingName)).toBe("(--s3-secret-access-key-file or LDS_S3_SECRET_ACCESS_KEY) (the bucket in the s3:// location)");
  });

  it("no hint below the shells names a CLI flag or an S3 environment variable in its own words", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const rel = path.relative(path.join(ROOT, "src"), full);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith(".ts") && !/^(cli|server)\//.test(rel)) {
          for (const m of fs.readFileSync(full, "utf8").matchAll(/hint:[^\n]*(--(data-dir|s3-[a-z-]+|keep)\b|LDS_(S3_|DATA_DIR|SEARCH_TIMEOUT|GIT_CA_FILE|GIT_ALLOW))/g)) offenders.push(`${rel}: ${m[1]}`);
        }
      }
    };
    walk(path.join(ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
