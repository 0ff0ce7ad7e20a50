import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { tempDirForFile } from "../helpers/temp.js";
import { fingerprintTree, seedVolume } from "../helpers/volume.js";

/**
 * Issue 15: archives encrypted in the age format. The standard `age` CLI (Debian's) decrypts what LDS writes and
 * LDS reads what it writes, to recipients and with a passphrase; wrong keys and damaged files fail with their own
 * errors and change nothing.
 */
const SECRET = "ghp_encrypted-archive-token";
let dir: string;
let dataDir: string;
let identity: string;
let recipient: string;
let otherIdentity: string;
let s3: S3TestServer;

/** `age` reads a passphrase from the terminal only: util-linux's `script` gives it one. */
function agePassphrase(args: string[], passphrase: string, confirm: boolean): void {
  const input = confirm ? `${passphrase}\n${passphrase}\n` : `${passphrase}\n`;
  execFileSync("script", ["-qec", ["age", ...args].map((a) => `'${a}'`).join(" "), "/dev/null"], { input, stdio: ["pipe", "ignore", "ignore"] });
}

const lds = (bin: "lds" | "backup" | "restore", args: string[], env: Record<string, string> = {}) => runCli(bin, args, env);

beforeAll(async () => {
  dir = tempDirForFile("lds-age-");
  dataDir = path.join(dir, "volume");
  await seedVolume(dataDir, { secret: SECRET });
  identity = path.join(dir, "identity.txt");
  otherIdentity = path.join(dir, "other.txt");
  execFileSync("age-keygen", ["-o", identity], { stdio: "ignore" });
  execFileSync("age-keygen", ["-o", otherIdentity], { stdio: "ignore" });
  recipient = execFileSync("age-keygen", ["-y", identity], { encoding: "utf8" }).trim();
  s3 = await startS3Server();
}, 60_000);

afterAll(async () => {
  await s3?.stop();
});

describe("encrypted archives (age)", () => {
  let encrypted: string;

  it("are written to recipients as .tar.age, stream through the age CLI into tar, and verify with the identity", async () => {
    const out = path.join(dir, "out");
    const r = await lds("backup", ["--data-dir", dataDir, "--to", out, "--age-recipient", recipient, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.name).toMatch(/^lds-backup-\d{8}T\d{6}Z\.tar\.age$/);
    expect(result).toMatchObject({ encryption: "age (1 recipient)", warnings: [] });
    expect(r.stderr).not.toContain("Warning");
    encrypted = path.join(out, result.name);
    // No byte of the key or the token is readable in the file.
    const bytes = fs.readFileSync(encrypted);
    expect(bytes.subarray(0, 22).toString()).toBe("age-encryption.org/v1\n");
    expect(bytes.includes(Buffer.from(SECRET))).toBe(false);
    expect(bytes.includes(fs.readFileSync(path.join(dataDir, "secret.key")))).toBe(false);

    const listed = execFileSync("sh", ["-c", `age -d -i '${identity}' '${encrypted}' | tar tf -`], { encoding: "utf8" });
    expect(listed.split("\n").filter(Boolean)).toEqual(["manifest.json", "db/lds.db", "vectors/vectors.db", "key/secret.key"]);
    const extracted = path.join(dir, "extracted");
    fs.mkdirSync(extracted);
    execFileSync("sh", ["-c", `age -d -i '${identity}' '${encrypted}' | tar xf - -C '${extracted}'`]);
    expect(fs.readFileSync(path.join(extracted, "key/secret.key")).equals(fs.readFileSync(path.join(dataDir, "secret.key")))).toBe(true);

    const verified = await lds("lds", ["verify", encrypted, "--identity", identity, "--json"]);
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, encryption: { format: "age", stanzas: ["X25519"] }, warnings: [] });
    const inspected = await lds("lds", ["inspect", encrypted, "--json"], { LDS_AGE_IDENTITY_FILE: identity });
    expect(inspected.exitCode, inspected.stderr).toBe(0);
    expect(JSON.parse(inspected.stdout).libraries.map((l: { id: string }) => l.id)).toEqual(["/acme/gadgets", "/acme/widgets"]);
  });

  it("refuse without a key or with a wrong one (exit 11, naming the stanza types), and change nothing", async () => {
    const target = path.join(dir, "target");
    await seedVolume(target, { libraries: [{ id: "/other/lib" }] });
    const before = fingerprintTree(target);
    const none = await lds("lds", ["verify", encrypted]);
    expect(none.exitCode).toBe(11);
    expect(none.stderr).toContain(
      "The archive is encrypted with age (for 1 recipient: 1 X25519 stanza; an age header never names its recipients), and no identity or passphrase was given. Nothing was changed.",
    );
    expect(none.stderr).toContain("Hint: Give the identity file that belongs to one of its recipients (--identity or LDS_AGE_IDENTITY_FILE)");
    const wrong = await lds("restore", [encrypted, "--data-dir", target, "--yes", "--identity", otherIdentity]);
    expect(wrong.exitCode).toBe(11);
    expect(wrong.stderr).toMatch(/^Error: None of the given identities or passphrases opens this age archive \(for 1 recipient: 1 X25519 stanza/m);
    expect(fingerprintTree(target)).toEqual(before);
  });

  it("fail as damaged (exit 3) when truncated, with a flipped payload byte, or with another file's header, and change nothing", async () => {
    const target = path.join(dir, "target2");
    await seedVolume(target, { libraries: [{ id: "/other/lib" }] });
    const before = fingerprintTree(target);
    const bytes = fs.readFileSync(encrypted);
    const headerEnd = bytes.indexOf("\n", bytes.indexOf("\n--- ") + 1) + 1;
    // Another archive to the same recipient: its header (valid, with its own MAC and file key) on this payload.
    const other = await lds("backup", ["--data-dir", dataDir, "--to", path.join(dir, "other-out"), "--age-recipient", recipient, "--json"]);
    const otherBytes = fs.readFileSync(path.join(dir, "other-out", JSON.parse(other.stdout).name));
    const otherHeaderEnd = otherBytes.indexOf("\n", otherBytes.indexOf("\n--- ") + 1) + 1;
    const flipped = Buffer.from(bytes);
    flipped[headerEnd + 16 + 70_000]! ^= 0x01;
    // The header's MAC changed (one base64 character of it): the header no longer authenticates.
    const alteredHeader = Buffer.from(bytes);
    const macAt = bytes.indexOf("\n--- ") + 6;
    alteredHeader[macAt] = alteredHeader[macAt] === 0x41 ? 0x42 : 0x41;
    const cases: Array<[string, Buffer, RegExp]> = [
      ["truncated", bytes.subarray(0, bytes.length - 5000), /age-encrypted payload does not decrypt .*damaged or truncated/],
      ["flipped", flipped, /age-encrypted payload does not decrypt \(chunk 2 fails its authentication tag/],
      ["swapped header", Buffer.concat([otherBytes.subarray(0, otherHeaderEnd), bytes.subarray(headerEnd)]), /age-encrypted payload does not decrypt/],
      ["altered header", alteredHeader, /its age header fails its MAC \(the header was altered, or belongs to another file\)/],
    ];
    for (const [name, content, message] of cases) {
      const file = path.join(dir, `bad-${name.replace(" ", "-")}.tar.age`);
      fs.writeFileSync(file, content);
      const verified = await lds("lds", ["verify", file, "--identity", identity]);
      expect({ name, exit: verified.exitCode }).toEqual({ name, exit: 3 });
      expect(verified.stderr, name).toMatch(message);
      const restored = await lds("restore", [file, "--data-dir", target, "--yes", "--identity", identity]);
      expect(restored.exitCode, name).not.toBe(0);
    }
    expect(fingerprintTree(target)).toEqual(before);
  });

  it("written by the age CLI (to a recipient, or with a passphrase) verify and restore", async () => {
    const plainOut = path.join(dir, "plain");
    const plain = await lds("backup", ["--data-dir", dataDir, "--to", plainOut, "--json"]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    const plainResult = JSON.parse(plain.stdout);
    // An archive with the key in clear says so, with the setting that fixes it.
    expect(plainResult.warnings).toEqual([expect.objectContaining({ code: "archive_key_in_clear", hint: expect.stringContaining("--age-recipient or LDS_AGE_RECIPIENTS") })]);
    expect(plain.stderr).toContain("Warning: This archive holds the volume key in clear; anyone who can read it can read your stored credentials");
    const plainFile = path.join(plainOut, plainResult.name);
    expect(JSON.parse((await lds("lds", ["verify", plainFile, "--json"])).stdout).warnings[0].code).toBe("archive_key_in_clear");

    const byRecipient = path.join(dir, "by-cli.tar.age");
    execFileSync("age", ["-r", recipient, "-o", byRecipient, plainFile]);
    const restoredDir = path.join(dir, "restored-recipient");
    const restored = await lds("restore", [byRecipient, "--data-dir", restoredDir, "--yes", "-i", identity]);
    expect(restored.exitCode, restored.stderr).toBe(0);
    expect(fs.readFileSync(path.join(restoredDir, "secret.key")).equals(fs.readFileSync(path.join(dataDir, "secret.key")))).toBe(true);

    const passphraseFile = path.join(dir, "passphrase.txt");
    fs.writeFileSync(passphraseFile, "correct horse battery staple\n", { mode: 0o600 });
    const byPassphrase = path.join(dir, "by-cli-passphrase.tar.age");
    agePassphrase(["-p", "-o", byPassphrase, plainFile], "correct horse battery staple", true);
    expect(fs.readFileSync(byPassphrase).subarray(0, 40).toString()).toContain("-> scrypt ");
    const verified = await lds("lds", ["verify", byPassphrase, "--passphrase-file", passphraseFile, "--json"]);
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).encryption).toEqual({ format: "age", stanzas: ["scrypt"] });
    const wrongPassphrase = path.join(dir, "wrong.txt");
    fs.writeFileSync(wrongPassphrase, "not it\n");
    const wrong = await lds("lds", ["verify", byPassphrase, "--passphrase-file", wrongPassphrase]);
    expect(wrong.exitCode).toBe(11);
    expect(wrong.stderr).toContain("(for a passphrase: 1 scrypt stanza;");

    // On a terminal, with no passphrase file, the passphrase is asked for (util-linux's script gives a terminal).
    const asked = execFileSync("script", ["-qec", `node '${path.join(ROOT, "bin/lds.js")}' verify '${byPassphrase}'; echo "exit=$?"`, "/dev/null"], {
      input: "correct horse battery staple\r",
      encoding: "utf8",
    });
    expect(asked).toContain("Passphrase of the archive");
    expect(asked).toMatch(/Archive OK \(/);
    expect(asked).toContain("exit=0");

    // And LDS's own passphrase archives open with the age CLI.
    const ownOut = path.join(dir, "own-passphrase");
    const own = await lds("backup", ["--data-dir", dataDir, "--to", ownOut, "--gzip", "--json"], { LDS_AGE_PASSPHRASE_FILE: passphraseFile });
    expect(own.exitCode, own.stderr).toBe(0);
    const ownName = JSON.parse(own.stdout).name as string;
    expect(ownName).toMatch(/\.tar\.gz\.age$/);
    const decrypted = path.join(dir, "own.tar.gz");
    agePassphrase(["-d", "-o", decrypted, path.join(ownOut, ownName)], "correct horse battery staple", false);
    expect(execFileSync("tar", ["tzf", decrypted], { encoding: "utf8" }).split("\n")[0]).toBe("manifest.json");
  }, 60_000);

  it("round-trip through the S3 test server, streamed both ways", async () => {
    const bucket = await s3.createBucket();
    const env = { LDS_S3_ENDPOINT: s3.endpoint, LDS_S3_PATH_STYLE: "true", LDS_S3_ACCESS_KEY_ID: "test", LDS_S3_SECRET_ACCESS_KEY: "test", LDS_AGE_RECIPIENTS: recipient };
    const written = await lds("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/enc`, "--json"], env);
    expect(written.exitCode, written.stderr).toBe(0);
    const name = JSON.parse(written.stdout).name as string;
    expect(name).toMatch(/\.tar\.age$/);
    const verified = await lds("lds", ["verify", `s3://${bucket}/enc/${name}`, "--identity", identity, "--json"], env);
    expect(verified.exitCode, verified.stderr).toBe(0);
    const target = path.join(dir, "from-s3");
    const restored = await lds("restore", [`s3://${bucket}/enc/${name}`, "--data-dir", target, "--yes", "--identity", identity], env);
    expect(restored.exitCode, restored.stderr).toBe(0);
    expect(fs.readFileSync(path.join(target, "secret.key")).equals(fs.readFileSync(path.join(dataDir, "secret.key")))).toBe(true);
    const listed = await lds("lds", ["backups", "list", "--from", `s3://${bucket}/enc`, "--json"], env);
    expect(JSON.stringify(JSON.parse(listed.stdout))).toContain(name);
  }, 60_000);

  it("refuse a recipient that is not an age public key before anything is written", async () => {
    const out = path.join(dir, "never");
    const r = await lds("backup", ["--data-dir", dataDir, "--to", out, "--age-recipient", "age1notakey"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('"age1notakey" is not an age recipient.');
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
    // A passphrase is never a flag's value: --age-passphrase asks on a terminal, and without one says what to do.
    const noTerminal = await lds("backup", ["--data-dir", dataDir, "--to", out, "--age-passphrase"]);
    expect(noTerminal.exitCode).toBe(7);
    expect(noTerminal.stderr).toContain("Hint: Put the passphrase in a file and pass --age-passphrase-file FILE");
  });
});
