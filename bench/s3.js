// Backup to a local S3-compatible server (moto) against a plain Upload of the same bytes, in the same run, and the
// peak RSS of backups to S3 as the volume grows. moto holds objects in memory and slows down as it fills, so every
// sample gets a fresh moto, and LDS and the baseline alternate. moto's speed varies from one start to the next by up
// to 30% (one Python thread does all the work), so five pairs by default, and the ratio is the median of the pairs'
// ratios. Usage: node bench/s3.js [--sizes 1,2] [--s3-runs 5]
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { arg, fresh, measure, median } from "./lib/measure.js";
import { makeVolume } from "./make-volume.js";
import { ageKeys } from "./lib/age-keys.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const work = path.join(here, ".work");
const sizes = arg("sizes", "1").split(",").map(Number);
const runs = Number(arg("s3-runs", "5"));

async function freshMoto() {
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  // detached + kill of the group: the pyenv shim does not pass signals on to python.
  const moto = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore", detached: true });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(endpoint);
      break;
    } catch {
      if (i > 300) throw new Error("moto_server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const client = new S3Client({ region: "us-east-1", endpoint, forcePathStyle: true, credentials: { accessKeyId: "bench", secretAccessKey: "bench" } });
  await client.send(new CreateBucketCommand({ Bucket: "bench" }));
  const env = { LDS_S3_ENDPOINT: endpoint, LDS_S3_PATH_STYLE: "true", LDS_S3_ACCESS_KEY_ID: "bench", LDS_S3_SECRET_ACCESS_KEY: "bench" };
  return { env, stop: () => process.kill(-moto.pid, "SIGKILL") };
}

for (const size of sizes) {
  const volume = path.join(work, `volume-${size}g`);
  process.stderr.write(`Building a ${size} GiB volume in ${volume} (reused when present)…\n`);
  await makeVolume(volume, size);
  const local = fresh(path.join(work, "s3-local"));
  measure(["node", path.join(root, "bin/lds.js"), "backup", "--data-dir", volume, "--to", local]);
  const archive = path.join(local, fs.readdirSync(local)[0]);
  const mib = fs.statSync(archive).size / 1048576;

  const lds = [];
  const plain = [];
  for (let i = 0; i < runs; i++) {
    let moto = await freshMoto();
    const run = measure(["node", path.join(root, "bin/lds.js"), "backup", "--data-dir", volume, "--to", "s3://bench/lds", "--json"], moto.env);
    lds.push({ ...run, phases: JSON.parse(run.stdout).phases });
    moto.stop();
    moto = await freshMoto();
    plain.push(measure(["node", path.join(here, "lib/upload-baseline.js"), archive, "bench", "plain/archive.tar"], moto.env));
    moto.stop();
  }
  // An encrypted backup streams through age's cipher as well: its peak counts against the same limit (once: it is
  // the upload's memory that differs, not its speed, which bench/run.js compares for local archives).
  const { recipient } = ageKeys(path.join(work, "s3-age"));
  const motoForAge = await freshMoto();
  const sealed = measure(["node", path.join(root, "bin/lds.js"), "backup", "--data-dir", volume, "--to", "s3://bench/lds", "--age-recipient", recipient], motoForAge.env);
  motoForAge.stop();
  const m = (list, f) => median(list.map(f));
  const total = m(lds, (r) => r.seconds);
  const upload = m(lds, (r) => r.phases.writeMs / 1000);
  const snapshot = m(lds, (r) => r.phases.snapshotMs / 1000);
  const base = m(plain, (r) => r.seconds);
  const ratio = median(lds.map((r, i) => r.seconds / plain[i].seconds));
  console.log(`\n## S3 (moto): ${size} GiB volume (archive ${mib.toFixed(0)} MiB), median of ${runs}, fresh moto per sample\n`);
  console.log("| operation | seconds | MiB/s | peak RSS (MiB) |");
  console.log("|---|---|---|---|");
  console.log(`| lds backup --to s3:// (whole command) | ${total.toFixed(2)} | ${(mib / total).toFixed(0)} | ${Math.max(...lds.map((r) => r.rssMiB)).toFixed(0)} |`);
  console.log(`| … of which snapshot + hashing | ${snapshot.toFixed(2)} | | |`);
  console.log(`| … of which tar stream + multipart upload | ${upload.toFixed(2)} | ${(mib / upload).toFixed(0)} | |`);
  console.log(`| plain lib-storage Upload of the same archive file (baseline) | ${base.toFixed(2)} | ${(mib / base).toFixed(0)} | ${Math.max(...plain.map((r) => r.rssMiB)).toFixed(0)} |`);
  console.log(`| whole backup / baseline, ratio of the medians (earlier releases' row) | ${(total / base).toFixed(2)} | | |`);
  console.log(`| whole backup / baseline, median of the pairs (target ≤ 1.2) | ${ratio.toFixed(2)} ${ratio <= 1.2 ? "✅" : "❌"} | | |`);
  console.log(`| the pairs' ratios | ${lds.map((r, i) => (r.seconds / plain[i].seconds).toFixed(2)).join(", ")} | | |`);
  const peak = Math.max(...lds.map((r) => r.rssMiB));
  console.log(`| lds backup --to s3:// peak RSS (target < 150 MiB) | ${peak.toFixed(0)} ${peak < 150 ? "✅" : "❌"} | | |`);
  console.log(`| lds backup --to s3:// --age-recipient (one run) peak RSS (target < 150 MiB) | ${sealed.rssMiB.toFixed(0)} ${sealed.rssMiB < 150 ? "✅" : "❌"} | | |`);
  console.log(`| upload phase / baseline | ${(upload / base).toFixed(2)} | | |`);
}
