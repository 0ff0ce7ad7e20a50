import fs from "node:fs";
import path from "node:path";
import { LdsError } from "../errors.js";
import type { Destination } from "./destination.js";
import { createLocalDestination } from "./local.js";
import type { S3DestinationOptions } from "./s3.js";

/** S3 settings other than bucket and prefix, which come from the s3:// URL. */
export type S3Settings = Omit<S3DestinationOptions, "bucket" | "prefix">;

/**
 * S3 settings from the environment, overridden by flags. The secret is read from LDS_S3_SECRET_ACCESS_KEY or a
 * file, never from a flag's value: command lines show up in `ps` and shell history.
 */
export function s3Settings(
  flags: { s3Region?: string; s3Endpoint?: string; s3PathStyle?: boolean; s3AccessKeyId?: string; s3SecretAccessKeyFile?: string },
  env: NodeJS.ProcessEnv = process.env,
): S3Settings {
  let secretAccessKey = env.LDS_S3_SECRET_ACCESS_KEY || undefined;
  if (flags.s3SecretAccessKeyFile) {
    try {
      secretAccessKey = fs.readFileSync(flags.s3SecretAccessKeyFile, "utf8").trim();
    } catch {
      throw new LdsError("validation_error", `Cannot read the S3 secret key file ${flags.s3SecretAccessKeyFile}.`, {
        hint: "Check the path given to --s3-secret-access-key-file and its permissions.",
      });
    }
  }
  const pathStyle = flags.s3PathStyle ?? (env.LDS_S3_PATH_STYLE ? /^(1|true|yes)$/i.test(env.LDS_S3_PATH_STYLE) : undefined);
  return {
    region: flags.s3Region || env.LDS_S3_REGION || undefined,
    endpoint: flags.s3Endpoint || env.LDS_S3_ENDPOINT || undefined,
    forcePathStyle: pathStyle,
    accessKeyId: flags.s3AccessKeyId || env.LDS_S3_ACCESS_KEY_ID || undefined,
    secretAccessKey,
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

export function isS3Url(spec: string): boolean {
  return spec.startsWith("s3://");
}

/** A destination from what an operator typed: a directory, or s3://bucket/prefix. The AWS SDK loads only for S3. */
export async function destinationFor(spec: string, settings: S3Settings): Promise<Destination> {
  if (!isS3Url(spec)) return createLocalDestination({ dir: path.resolve(spec) });
  const { createS3Destination } = await import("./s3.js");
  return createS3Destination({ ...settings, ...parseS3Url(spec) });
}

/** `s3://bucket/prefix/lds-backup-….tar` → the destination holding it and the archive's name. */
export async function remoteArchive(url: string, settings: S3Settings): Promise<{ destination: Destination; name: string }> {
  const { bucket, prefix } = parseS3Url(url);
  const slash = prefix.lastIndexOf("/");
  const { createS3Destination } = await import("./s3.js");
  return {
    destination: createS3Destination({ ...settings, bucket, prefix: slash < 0 ? "" : prefix.slice(0, slash) }),
    name: prefix.slice(slash + 1),
  };
}
