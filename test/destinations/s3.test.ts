import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll } from "vitest";
import { createS3Destination } from "../../src/destinations/s3.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { destinationConformance } from "./conformance.js";

let server: S3TestServer;
beforeAll(async () => {
  server = await startS3Server();
});
afterAll(async () => {
  await server?.stop();
});

destinationConformance("S3 (real S3-compatible server)", async () => {
  const bucket = await server.createBucket();
  const prefix = "nightly/lds";
  return {
    destination: createS3Destination({ ...server.settings, bucket, prefix, minPartSize: 5 * 1024 * 1024 }),
    async putForeign(name, body) {
      await server.client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${name}`, Body: body }));
    },
    async listEverything() {
      const objects = await server.client.send(new ListObjectsV2Command({ Bucket: bucket }));
      const uploads = await server.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return [...(objects.Contents ?? []).map((o) => o.Key!.replace(`${prefix}/`, "")), ...(uploads.Uploads ?? []).map((u) => `multipart:${u.Key}`)].sort();
    },
  };
});
