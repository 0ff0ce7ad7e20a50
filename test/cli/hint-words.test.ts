import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_HINT_WORDS, cliSettingName } from "../../src/cli/hint-words.js";
import { action, renderHint } from "../../src/hints.js";
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

describe("settings and actions named in hints (issue 12: messages name them neutrally, shells render them)", () => {
  it("the CLI names every setting a hint refers to by its flag and environment variable", () => {
    const keys = keysUsed();
    expect(keys).toEqual(expect.arrayContaining(["dataDir", "s3.region", "s3.secretAccessKey"]));
    expect(keys.filter((key) => cliSettingName(key) === undefined)).toEqual([]);
    expect(renderHint("Set the bucket's region ({s3.region}).", CLI_HINT_WORDS)).toBe("Set the bucket's region (--s3-region or LDS_S3_REGION).");
    expect(renderHint("Point {dataDir} at a directory.", CLI_HINT_WORDS)).toBe("Point --data-dir or LDS_DATA_DIR at a directory.");
    expect(renderHint("({s3.secretAccessKey}) ({s3.bucket})", CLI_HINT_WORDS)).toBe("(--s3-secret-access-key-file or LDS_S3_SECRET_ACCESS_KEY) (the bucket in the s3:// location)");
  });

  it("renders an action as the command that does it, with its arguments intact", () => {
    expect(renderHint(`Refresh it: ${action("library.refresh", { libraryName: "/a/b" })}.`, CLI_HINT_WORDS)).toBe("Refresh it: `lds ingest git URL (with the library's source)`.");
    expect(renderHint(`Connect one (${action("connection.addGit", { host: "git.example.test:8443" })}).`, CLI_HINT_WORDS)).toBe("Connect one (`lds connections add-git --host git.example.test:8443`).");
    // Any text survives as an argument, braces and spaces included.
    expect(renderHint(action("library.addBranch", { branch: "feat/{x} y" }), CLI_HINT_WORDS)).toBe("`lds ingest git URL --branch feat/{x} y`");
    expect(renderHint(`${action("user.add", { email: "a@b.test" })} then ${action("key.create")}`, CLI_HINT_WORDS)).toBe("`lds users add a@b.test --team TEAM` then `lds keys create --email EMAIL`");
  });

  it("no hint below the shells names a CLI flag, command, environment variable or HTTP path in its own words", () => {
    const offenders: string[] = [];
    const shellWords =
      /(--(data-dir|s3-[a-z-]+|keep|identity|passphrase-file|age-[a-z-]+)\b|LDS_(S3_|DATA_DIR|SEARCH_TIMEOUT|GIT_CA_FILE|GIT_ALLOW|AGE_|EMBEDDINGS_)|`lds[ -]|\blds(-restore|-backup)? [a-z]+ [a-z-]+|\b(GET|POST|PUT|PATCH|DELETE) \/|\/(v[12]|api)\/[a-z])/;
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const rel = path.relative(path.join(ROOT, "src"), full);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith(".ts") && !/^(cli|server)\//.test(rel)) {
          // A hint's text runs from `hint` to the end of its line (and the next line, for a hint on its own line).
          const lines = fs.readFileSync(full, "utf8").split("\n");
          lines.forEach((line, i) => {
            if (!/\bhint\b/.test(line)) return;
            const text = line + (/hint:?\s*$/.test(line) ? (lines[i + 1] ?? "") : "");
            const found = shellWords.exec(text.slice(text.search(/\bhint\b/)));
            if (found) offenders.push(`${rel}:${i + 1}: ${found[0]}`);
          });
        }
      }
    };
    walk(path.join(ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
