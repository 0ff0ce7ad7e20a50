import { Ajv, type ErrorObject } from "ajv";
import path from "node:path";
import type { BackupConfig } from "../config/backup-config.js";
import { LdsError } from "../errors.js";

/** JSON Schema of PUT /api/backup/config (docs/admin-api.md). The destination is told apart by its `type`. */
const schema = {
  type: "object",
  additionalProperties: false,
  required: ["destination", "schedule", "retention", "compression"],
  properties: {
    destination: {
      type: "object",
      discriminator: { propertyName: "type" },
      required: ["type"],
      oneOf: [
        {
          additionalProperties: false,
          properties: { type: { const: "local" }, path: { type: ["string", "null"], minLength: 1, maxLength: 4096 } },
        },
        {
          additionalProperties: false,
          required: ["bucket"],
          properties: {
            type: { const: "s3" },
            bucket: { type: "string", pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" },
            region: { type: "string", pattern: "^[a-z0-9-]{2,32}$", default: "us-east-1" },
            endpoint: { type: ["string", "null"], pattern: "^https?://[^\\s]+$", default: null },
            forcePathStyle: { type: "boolean", default: false },
            prefix: { type: "string", maxLength: 512, pattern: "^[^\\\\]*$", default: "" },
            accessKeyId: { type: ["string", "null"], maxLength: 256, default: null },
            secretAccessKey: { type: "string", maxLength: 1024 },
            secretAccessKeySet: { type: "boolean" },
          },
        },
      ],
    },
    schedule: {
      type: "object",
      additionalProperties: false,
      required: ["preset"],
      properties: {
        preset: { enum: ["off", "daily", "every-6-hours", "weekly", "custom"] },
        cron: { type: ["string", "null"], maxLength: 128, default: null },
        timezone: { type: "string", maxLength: 64, default: "UTC" },
      },
    },
    retention: {
      type: "object",
      additionalProperties: false,
      required: ["keep"],
      properties: { keep: { type: ["integer", "null"], minimum: 1, maximum: 100000 } },
    },
    compression: { enum: ["none", "gzip"] },
  },
};

const ajv = new Ajv({ discriminator: true, useDefaults: true, allErrors: false });
const check = ajv.compile(schema);

export type BackupConfigUpdate = BackupConfig & { destination: { secretAccessKey?: string } };

/** Validate a config body; the error names the field, e.g. "destination.bucket is required". */
export function parseBackupConfig(body: unknown): BackupConfigUpdate {
  const copy = structuredClone(body);
  if (!check(copy)) throw new LdsError("validation_error", describe(check.errors![0]!), { hint: "See docs/admin-api.md for the configuration's shape." });
  const config = copy as unknown as BackupConfigUpdate;
  const destination = config.destination;
  if (destination.type === "local" && destination.path && !path.isAbsolute(destination.path)) {
    throw new LdsError("validation_error", "destination.path must be an absolute path.", { hint: "For example /var/backups/lds." });
  }
  return config;
}

function describe(error: ErrorObject): string {
  const field = error.instancePath.slice(1).replace(/\//g, ".") || "body";
  if (error.keyword === "required") return `${field === "body" ? "" : `${field}.`}${error.params.missingProperty} is required.`;
  if (error.keyword === "additionalProperties") return `${field === "body" ? "" : `${field}.`}${error.params.additionalProperty} is not a known field.`;
  if (error.keyword === "discriminator") return `${field}.type must be "local" or "s3".`;
  if (error.keyword === "enum") return `${field} must be one of ${(error.params.allowedValues as string[]).map((v) => JSON.stringify(v)).join(", ")}.`;
  if (error.keyword === "const") return `${field} must be ${JSON.stringify(error.params.allowedValue)}.`;
  return `${field} ${error.message}.`;
}
