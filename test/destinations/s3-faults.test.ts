import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand } from "@aws-sdk/client-s3";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3Destination } from "../../src/destinations/s3.js";
import { backup } from "../../src/ops/backup.js";
import { restore } from "../../src/ops/restore.js";
import { runCli } from "../helpers/cli.js";
import { freePort, startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { startProxy } from "../helpers/tcp-proxy.js";
import { startS3WithUser } from "../helpers/s3-iam.js";
import { tempDir } from "../helpers/temp.js";
import { addBallast, seedVolume } from "../helpers/volume.js";

let server: S3TestServer;
beforeAll(async () => {
  server = await startS3Server();
});
afterAll(async () => {
  await server?.stop();
});

const s3Env = () => ({
  LDS_S3_ENDPOINT: server.endpoint,
  LDS_S3_PATH_STYLE: "true",
  LDS_S3_ACCESS_KEY_ID: "test",
  LDS_S3_SECRET_ACCESS_KEY: "test",
});

async function volumeWithBallast(mib: number): Promise<string> {
  const dataDir = tempDir("lds-s3vol-");
  await seedVolume(dataDir);
  addBallast(dataDir, mib);
  return dataDir;
}

async function bucketState(bucket: string) {
  const objects = await server.client.send(new ListObjectsV2Command({ Bucket: bucket }));
  const uploads = await server.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return { objects: (objects.Contents ?? []).map((o) => o.Key), uploads: (uploads.Uploads ?? []).map((u) => u.Key) };
}

describe("S3 from the command line", () => {
  it("the next backup, or prune, aborts the incomplete uploads killed backups left, and only ours (item 10)", async () => {
    const bucket = await server.createBucket();
    // What a backup killed with SIGKILL mid-upload leaves: a multipart upload with a part, under an archive name.
    const start = async (key: string) => {
      const { UploadId } = await server.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      await server.client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024, 1) }));
    };
    await start("nightly/lds-backup-20260101T000000Z.tar");
    await start("nightly/someone-elses-upload.bin");
    await start("other/lds-backup-20260101T000000Z.tar");
    const dataDir = await volumeWithBallast(1);
    const result = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/nightly`, "--json"], s3Env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).incompleteRemoved).toEqual(["lds-backup-20260101T000000Z.tar"]);
    expect((await bucketState(bucket)).uploads.sort()).toEqual(["nightly/someone-elses-upload.bin", "other/lds-backup-20260101T000000Z.tar"]);

    await start("nightly/lds-backup-20260102T000000Z.tar.gz");
    const pruned = await runCli("lds", ["backups", "prune", "--keep", "5", "--data-dir", dataDir, "--from", `s3://${bucket}/nightly`, "--json"], s3Env());
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout).incompleteRemoved).toEqual(["lds-backup-20260102T000000Z.tar.gz"]);
    expect((await bucketState(bucket)).uploads.sort()).toEqual(["nightly/someone-elses-upload.bin", "other/lds-backup-20260101T000000Z.tar"]);
  });

  it("backs up with retention, lists, and restores s3://…/<name> round trip; other objects are never touched", async () => {
    const bucket = await server.createBucket();
    await server.client.send(new PutObjectCommand({ Bucket: bucket, Key: "nightly/README.txt", Body: "operator notes" }));
    const dataDir = await volumeWithBallast(20);
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/nightly`, "--keep", "2", "--json"], s3Env());
      expect(result.exitCode, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report.path).toBe(`s3://${bucket}/nightly/${report.name}`);
      names.push(report.name);
      if (i === 2) expect(report.pruned).toEqual([names[0]]);
    }
    const listed = await runCli("lds", ["backups", "list", "--from", `s3://${bucket}/nightly`, "--json"], s3Env());
    expect(JSON.parse(listed.stdout).archives.map((a: { name: string }) => a.name)).toEqual([names[2], names[1]]);
    expect((await bucketState(bucket)).objects).toContain("nightly/README.txt");

    const target = tempDir();
    const restored = await runCli("restore", [`s3://${bucket}/nightly/${names[2]}`, "--data-dir", target, "--yes"], s3Env());
    expect(restored.exitCode, restored.stderr).toBe(0);
    const db = new Database(path.join(target, "lds.db"), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM ballast").pluck().get()).toBe(20);
    db.close();
    expect(fs.readdirSync(target).filter((n) => n.startsWith("restore-"))).toEqual([]);

    const pruned = await runCli("lds", ["backups", "prune", "--keep", "1", "--from", `s3://${bucket}/nightly`], s3Env());
    expect(pruned.stdout).toContain(`removed ${names[1]}`);
    expect((await bucketState(bucket)).objects.sort()).toEqual([`nightly/${names[2]}`, "nightly/README.txt"].sort());
  });

  it("names the setting to check for a missing bucket and an unreachable endpoint (exit 8)", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    const missing = await runCli("backup", ["--data-dir", dataDir, "--to", "s3://no-such-bucket-here/x"], s3Env());
    expect(missing.exitCode).toBe(8);
    expect(missing.stderr).toMatch(/^Error: The bucket "no-such-bucket-here" does not exist/m);
    expect(missing.stderr).toMatch(/^Hint: Check the bucket name/m);

    const closed = await freePort();
    const unreachable = await runCli("backup", ["--data-dir", dataDir, "--to", "s3://some-bucket/x"], { ...s3Env(), LDS_S3_ENDPOINT: `http://127.0.0.1:${closed}` });
    expect(unreachable.exitCode).toBe(8);
    expect(unreachable.stderr).toMatch(/Cannot reach s3:\/\/some-bucket .*ECONNREFUSED/);
    expect(unreachable.stderr).toMatch(/LDS_S3_ENDPOINT/);
    expect(unreachable.stderr + unreachable.stdout).not.toContain("test\n");

    // No credentials anywhere (and the instance metadata service off: tests reach only loopback).
    const bucket = await server.createBucket();
    const nowhere = tempDir();
    const none = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/x`], {
      LDS_S3_ENDPOINT: server.endpoint,
      LDS_S3_PATH_STYLE: "true",
      AWS_ACCESS_KEY_ID: "",
      AWS_SECRET_ACCESS_KEY: "",
      AWS_PROFILE: "",
      AWS_EC2_METADATA_DISABLED: "true",
      HOME: nowhere,
      AWS_CONFIG_FILE: path.join(nowhere, "config"),
      AWS_SHARED_CREDENTIALS_FILE: path.join(nowhere, "credentials"),
    });
    expect(none.exitCode, none.stderr).toBe(8);
    expect(none.stderr).toMatch(/^Error: No S3 credentials were found for s3:\/\/.* none were given, and the default AWS credential chain found none\./m);
    expect(none.stderr).toMatch(/^Hint: Give an access key id and secret \(--s3-access-key-id or LDS_S3_ACCESS_KEY_ID, --s3-secret-access-key-file or LDS_S3_SECRET_ACCESS_KEY\)/m);
  });
});

describe("verify and inspect straight from S3", () => {
  it("verify streams the object, inspect reads its head, a damaged object is named", async () => {
    const bucket = await server.createBucket();
    const dataDir = await volumeWithBallast(8);
    const made = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/v`, "--json"], s3Env());
    const { name, sha256 } = JSON.parse(made.stdout);

    const verified = await runCli("lds", ["verify", `s3://${bucket}/v/${name}`, "--json"], s3Env());
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, compatibility: { restorable: true } });
    const inspected = await runCli("lds", ["inspect", `s3://${bucket}/v/${name}`, "--json"], s3Env());
    expect(JSON.parse(inspected.stdout).libraries).toHaveLength(2);

    const { GetObjectCommand } = await import("@aws-sdk/client-s3");
    const object = await server.client.send(new GetObjectCommand({ Bucket: bucket, Key: `v/${name}` }));
    const bytes = Buffer.from(await object.Body!.transformToByteArray());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(sha256);
    bytes[bytes.length - 5000]! ^= 0xff;
    const damagedName = name.replace(/\d{6}Z/, "000000Z");
    await server.client.send(new PutObjectCommand({ Bucket: bucket, Key: `v/${damagedName}`, Body: bytes }));
    const damaged = await runCli("lds", ["verify", `s3://${bucket}/v/${damagedName}`], s3Env());
    expect(damaged.exitCode).toBe(3);
    expect(damaged.stderr).toMatch(/fails its checksum/);
    const missing = await runCli("lds", ["inspect", `s3://${bucket}/v/lds-backup-20000101T000000Z.tar`], s3Env());
    expect(missing.exitCode).toBe(4);
  });
});

describe("S3 faults", () => {
  it("server gone in the middle of an upload: clear error, no object, no multipart upload once it is back", async () => {
    const bucket = await server.createBucket();
    const proxy = await startProxy(server.port);
    const dataDir = await volumeWithBallast(40);
    const destination = createS3Destination({ ...server.settings, endpoint: proxy.endpoint, bucket, prefix: "p", minPartSize: 5 * 1024 * 1024, queueSize: 1 });
    // Down for 1.5 s: longer than the SDK's own retries of a part, shorter than the backup's retries of the abort.
    proxy.downAfterUpload(12 * 1024 * 1024, 1500);
    await expect(backup({ dataDir, destination })).rejects.toMatchObject({ code: "destination_unreachable" });
    await proxy.backUp();
    expect(await bucketState(bucket)).toEqual({ objects: [], uploads: [] });
    expect(fs.readdirSync(dataDir).filter((n) => n.startsWith("backup-"))).toEqual([]);
    await proxy.close();
  });

  it("a download dropped mid-way resumes with a range request instead of failing", async () => {
    const bucket = await server.createBucket();
    const dataDir = await volumeWithBallast(12);
    await backup({ dataDir, destination: createS3Destination({ ...server.settings, bucket }) });
    const proxy = await startProxy(server.port);
    const destination = createS3Destination({ ...server.settings, endpoint: proxy.endpoint, bucket });
    const [archive] = await (async () => {
      const all = [];
      for await (const a of destination.list()) all.push(a.name);
      return all;
    })();
    proxy.cutDownloadAfter(3 * 1024 * 1024);
    const target = tempDir();
    await restore({ dataDir: target, archive: `s3://${bucket}/${archive}`, download: { destination, name: archive! }, confirm: async () => true });
    expect(proxy.stats.cuts).toBe(1);
    const db = new Database(path.join(target, "lds.db"), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM ballast").pluck().get()).toBe(12);
    db.close();
    await proxy.close();
  });

  it("wrong credentials and a denied prefix each get their own error (moto enforcing IAM)", async () => {
    const { server: iamServer, bucket, accessKeyId, secretAccessKey } = await startS3WithUser("iam-bucket");
    try {
      const dataDir = tempDir();
      await seedVolume(dataDir);
      const env = { LDS_S3_ENDPOINT: iamServer.endpoint, LDS_S3_PATH_STYLE: "1", LDS_S3_ACCESS_KEY_ID: accessKeyId, LDS_S3_SECRET_ACCESS_KEY: secretAccessKey };

      const wrong = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/allowed`], { ...env, LDS_S3_SECRET_ACCESS_KEY: "not-the-secret" });
      expect(wrong.exitCode).toBe(8);
      expect(wrong.stderr).toMatch(/rejected the credentials/);
      expect(wrong.stderr).toMatch(/LDS_S3_SECRET_ACCESS_KEY/);
      expect(wrong.stderr).not.toContain("not-the-secret");

      const denied = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/forbidden`], env);
      expect(denied.exitCode).toBe(8);
      expect(denied.stderr).toMatch(/Access denied to s3:\/\/iam-bucket/);

      const allowed = await runCli("backup", ["--data-dir", dataDir, "--to", `s3://${bucket}/allowed`, "--json"], env);
      expect(allowed.exitCode, allowed.stderr).toBe(0);
    } finally {
      await iamServer.stop();
    }
  });
});
