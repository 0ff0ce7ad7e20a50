// Baseline for the S3 benchmark: a plain lib-storage Upload of an existing file, nothing else.
// Usage: node upload-baseline.js FILE BUCKET KEY   (endpoint and credentials from LDS_S3_* variables)
import fs from "node:fs";
import { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const [file, bucket, key] = process.argv.slice(2);
const client = new S3Client({
  region: "us-east-1",
  endpoint: process.env.LDS_S3_ENDPOINT,
  forcePathStyle: true,
  credentials: { accessKeyId: process.env.LDS_S3_ACCESS_KEY_ID, secretAccessKey: process.env.LDS_S3_SECRET_ACCESS_KEY },
  requestChecksumCalculation: "WHEN_REQUIRED",
});
const size = fs.statSync(file).size;
await new Upload({
  client,
  params: { Bucket: bucket, Key: key, Body: fs.createReadStream(file, { highWaterMark: 1 << 20 }) },
  // The same part size and parallelism as LDS's S3 driver, so only the pipeline differs.
  partSize: Math.max(8 << 20, Math.ceil(size / 9000)),
  queueSize: 2,
}).done();
