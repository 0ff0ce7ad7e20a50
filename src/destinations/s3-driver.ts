import { LdsError } from "../errors.js";
import type { DestinationDriver, DriverSettings } from "./driver.js";
import type { S3DestinationOptions } from "./s3.js";

/** AWS S3 and S3-compatible stores, at s3://bucket/prefix. The AWS SDK loads only when one is opened. */
export const s3Driver: DestinationDriver = {
  kind: "s3",
  scheme: "s3",
  label: "S3 options:",
  settings: [
    { key: "region", type: "string", flag: "s3-region", env: "LDS_S3_REGION", describe: "S3 region", fallback: "us-east-1" },
    { key: "endpoint", type: "string", flag: "s3-endpoint", env: "LDS_S3_ENDPOINT", describe: "S3-compatible endpoint URL", fallback: "AWS" },
    { key: "forcePathStyle", type: "boolean", flag: "s3-path-style", env: "LDS_S3_PATH_STYLE", describe: "Path-style addressing" },
    { key: "accessKeyId", type: "string", flag: "s3-access-key-id", env: "LDS_S3_ACCESS_KEY_ID", describe: "Access key id", fallback: "the AWS chain" },
    { key: "secretAccessKey", type: "string", flag: "s3-secret-access-key", env: "LDS_S3_SECRET_ACCESS_KEY", describe: "secret key", secret: true },
  ],
  locationOf: (config) => `s3://${String(config.bucket)}${config.prefix ? `/${String(config.prefix)}` : ""}`,
  config: {
    required: ["bucket"],
    properties: {
      bucket: { type: "string", pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" },
      region: { type: "string", pattern: "^[a-z0-9-]{2,32}$", default: "us-east-1" },
      endpoint: { type: ["string", "null"], pattern: "^https?://[^\\s]+$", default: null },
      forcePathStyle: { type: "boolean", default: false },
      prefix: { type: "string", maxLength: 512, pattern: "^[^\\\\]*$", default: "" },
      accessKeyId: { type: ["string", "null"], maxLength: 256, default: null },
    },
  },
  async open(location, settings) {
    const { createS3Destination } = await import("./s3.js");
    return createS3Destination({ ...options(settings), ...parseS3Url(location) });
  },
  async openArchive(location, settings) {
    const { bucket, prefix } = parseS3Url(location);
    const slash = prefix.lastIndexOf("/");
    const { createS3Destination } = await import("./s3.js");
    return {
      destination: createS3Destination({ ...options(settings), bucket, prefix: slash < 0 ? "" : prefix.slice(0, slash) }),
      name: prefix.slice(slash + 1),
    };
  },
};

function options(settings: DriverSettings): Omit<S3DestinationOptions, "bucket" | "prefix"> {
  const text = (key: string) => (typeof settings[key] === "string" && settings[key] ? (settings[key] as string) : undefined);
  return {
    region: text("region"),
    endpoint: text("endpoint"),
    forcePathStyle: typeof settings.forcePathStyle === "boolean" ? settings.forcePathStyle : undefined,
    accessKeyId: text("accessKeyId"),
    secretAccessKey: text("secretAccessKey"),
  };
}

/** `s3://bucket/some/prefix` → bucket and prefix. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  const bucket = match?.[1] ?? "";
  if (!match || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new LdsError("validation_error", `"${url}" is not a valid s3:// location.`, {
      hint: "Write it as s3://BUCKET or s3://BUCKET/PREFIX (bucket names are 3-63 lowercase letters, digits, dots, hyphens).",
    });
  }
  return { bucket, prefix: match[2]!.replace(/\/+$/, "") };
}
