#!/usr/bin/env node
// Backup, verify and restore of an LDS data volume, side by side with their baselines in the same run:
//   lds backup   vs  sqlite3 .backup (both databases) + tar cf + sha256sum     target ≤ 0.7x
//   lds verify   vs  sha256sum of the archive (single-core SHA-256 speed)   target ≤ 1.0x
//   lds-restore  vs  sha256sum + tar xf (what a careful operator runs)       target ≤ 1.0x
// and every command's peak RSS under 150 MiB (issue 17).
// The baseline removes its intermediate snapshot like LDS removes its staging copy: both pay for the cleanup.
// Usage: node bench/run.js [--sizes 1,4] [--runs 3]   (sizes in GiB; raw results in bench/results/)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arg, bench as benchRuns, benchInTurns, fresh } from "./lib/measure.js";
import { makeVolume } from "./make-volume.js";
import { ageKeys } from "./lib/age-keys.js";

const bench = (argv, prepare) => benchRuns(runs, argv, { prepare });

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const work = path.join(here, ".work");
const sizes = arg("sizes", "1").split(",").map(Number);
const runs = Number(arg("runs", "3"));
const lds = (...args) => ["node", path.join(root, "bin/lds.js"), ...args];
const RSS_LIMIT_MIB = 150;
const dirBytes = (dir) => fs.readdirSync(dir).reduce((sum, n) => sum + fs.statSync(path.join(dir, n)).size, 0);

const rows = [];
for (const size of sizes) {
  const volume = path.join(work, `volume-${size}g`);
  process.stderr.write(`Building a ${size} GiB volume in ${volume} (reused when present)…\n`);
  await makeVolume(volume, size);
  const volumeBytes = ["lds.db", "vectors.db", "secret.key"].reduce((s, n) => s + fs.statSync(path.join(volume, n)).size, 0);

  // Each LDS command and its baseline run in turns (see benchInTurns): one step's writeback must not land on one side.
  const { identity, recipient } = ageKeys(path.join(work, "age"));
  const out = path.join(work, "out");
  const base = path.join(work, "baseline");
  const ageOut = path.join(work, "out-age");
  const [backup, baseline, backupAge] = benchInTurns(runs, [
    { argv: lds("backup", "--data-dir", volume, "--to", out), prepare: () => fresh(out) },
    {
      argv: [
        "bash",
        "-c",
        `set -e; cd ${base}; sqlite3 ${volume}/lds.db ".backup lds.db"; sqlite3 ${volume}/vectors.db ".backup vectors.db"; cp ${volume}/secret.key .; tar cf ../baseline.tar lds.db vectors.db secret.key; sha256sum ../baseline.tar >/dev/null; rm lds.db vectors.db secret.key`,
      ],
      prepare: () => fresh(base),
    },
    // Encrypted with age to a recipient (issue 15): the same backup and restore, side by side (target ≤ 1.3x).
    { argv: lds("backup", "--data-dir", volume, "--to", ageOut, "--age-recipient", recipient), prepare: () => fresh(ageOut) },
  ]);
  const archive = path.join(out, fs.readdirSync(out)[0]);
  const archiveBytes = fs.statSync(archive).size;
  const ageArchive = path.join(ageOut, fs.readdirSync(ageOut)[0]);

  // Each read-side sample starts with no dirty pages (sync): what the backups just wrote is flushed while the next
  // command runs, and slows whichever one writes (verify and restore extract 1.2 GB; sha256sum writes nothing).
  const quiet = () => execFileSync("sync");
  const [verify, sha] = benchInTurns(runs, [
    { argv: lds("verify", archive), prepare: quiet },
    { argv: ["sha256sum", archive], prepare: quiet },
  ]);

  const target = path.join(work, "restore-target");
  const untar = path.join(work, "untar");
  const [restore, tarx, restoreAge] = benchInTurns(runs, [
    { argv: lds("restore", archive, "--data-dir", target, "--yes"), prepare: () => (fresh(target), quiet()) },
    { argv: ["bash", "-c", `set -e; sha256sum ${archive} >/dev/null; tar xf ${archive} -C ${untar}`], prepare: () => (fresh(untar), quiet()) },
    { argv: lds("restore", ageArchive, "--data-dir", target, "--yes", "--identity", identity), prepare: () => (fresh(target), quiet()) },
  ]);

  const gzOut = path.join(work, "out-gz");
  const backupGz = bench(lds("backup", "--data-dir", volume, "--to", gzOut, "--gzip"), () => fresh(gzOut));
  const gzBytes = dirBytes(gzOut);

  const mibps = (bytes, s) => (bytes / 1048576 / s).toFixed(0);
  rows.push({ size, volumeBytes, archiveBytes, gzBytes, backup, baseline, verify, sha, restore, tarx, backupGz, backupAge, restoreAge, mibps });
  const ratio = (a, b) => (a.seconds / b.seconds).toFixed(2);
  console.log(`\n## ${size} GiB volume (${(volumeBytes / 1048576).toFixed(0)} MiB on disk, archive ${(archiveBytes / 1048576).toFixed(0)} MiB, gzip ${(gzBytes / 1048576).toFixed(0)} MiB), median of ${runs}\n`);
  const check = (value, limit) => `≤ ${limit} ${value <= limit ? "✅" : "❌"}`;
  const rss = (r) => `${r.rssMiB.toFixed(0)} ${r.rssMiB < RSS_LIMIT_MIB ? "✅" : "❌"}`;
  console.log(`| operation | LDS (s) | baseline (s) | LDS / baseline | target | LDS peak RSS (MiB, target < ${RSS_LIMIT_MIB}) |`);
  console.log("|---|---|---|---|---|---|");
  console.log(`| backup vs sqlite3 .backup ×2 + tar cf + sha256sum | ${backup.seconds} | ${baseline.seconds} | ${ratio(backup, baseline)} | ${check(backup.seconds / baseline.seconds, 0.7)} | ${rss(backup)} |`);
  console.log(
    `| verify vs sha256sum (${mibps(archiveBytes, verify.seconds)} vs ${mibps(archiveBytes, sha.seconds)} MiB/s) | ${verify.seconds} | ${sha.seconds} | ${ratio(verify, sha)} | ${check(verify.seconds / sha.seconds, 1.0)} | ${rss(verify)} |`,
  );
  console.log(`| restore vs sha256sum + tar xf | ${restore.seconds} | ${tarx.seconds} | ${ratio(restore, tarx)} | ${check(restore.seconds / tarx.seconds, 1.0)} | ${rss(restore)} |`);
  console.log(
    `| backup encrypted (age, 1 recipient) vs plain backup | ${backupAge.seconds} | ${backup.seconds} | ${ratio(backupAge, backup)} | ${check(backupAge.seconds / backup.seconds, 1.3)} | ${rss(backupAge)} |`,
  );
  console.log(
    `| restore of the encrypted archive vs plain restore | ${restoreAge.seconds} | ${restore.seconds} | ${ratio(restoreAge, restore)} | ${check(restoreAge.seconds / restore.seconds, 1.3)} | ${rss(restoreAge)} |`,
  );
  console.log(`| backup --gzip (level 1) vs plain backup | ${backupGz.seconds} | ${backup.seconds} | ${ratio(backupGz, backup)} | (informative) | ${rss(backupGz)} |`);
}
fs.mkdirSync(path.join(here, "results"), { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
fs.writeFileSync(
  path.join(here, "results", `archive-${stamp}.json`),
  JSON.stringify({ sqlite3: execFileSync("sqlite3", ["--version"], { encoding: "utf8" }).trim(), node: process.version, runs, rows }, null, 2),
);
