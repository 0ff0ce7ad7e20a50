import { Ajv, type ErrorObject } from "ajv";
import path from "node:path";
import type { BackupConfig, DestinationConfig } from "../ops/backup-config.js";
import { destinationDrivers } from "../destinations/registry.js";
import { LdsError } from "../errors.js";
import { checkRecipients } from "../archive/age-seal.js";

/** JSON Schema of PUT /api/backup/config (docs/admin-api.md). The destination is told apart by its `type`. */
const schema = {
  type: "object",
  additionalProperties: false,
  required: ["destination", "schedule", "retention", "compression"],
  properties: {
    // Filled from the destination registry when the schema is compiled: one branch per driver.
    destination: {},
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
    // age recipients (public keys): the server needs no secret to encrypt; only a restore needs an identity.
    encryption: {
      type: "object",
      additionalProperties: false,
      required: ["recipients"],
      default: { recipients: [] },
      properties: { recipients: { type: "array", maxItems: 32, items: { type: "string", minLength: 1, maxLength: 2048 } } },
    },
    drill: {
      type: "object",
      additionalProperties: false,
      required: ["schedule"],
      default: { schedule: "off" },
      properties: { schedule: { enum: ["off", "after-backup", "daily"] } },
    },
  },
};

/** The destination's schema: one branch per registered driver, told apart by `type`. */
function destinationSchema(): object {
  return {
    type: "object",
    discriminator: { propertyName: "type" },
    required: ["type"],
    oneOf: destinationDrivers().map((driver) => {
      const secrets = Object.fromEntries(
        driver.settings
          .filter((s) => s.secret)
          .flatMap((s) => [
            [s.key, { type: "string", maxLength: 1024 }],
            [`${s.key}Set`, { type: "boolean" }],
          ]),
      );
      return {
        additionalProperties: false,
        required: driver.config.required ?? [],
        properties: { type: { const: driver.kind }, ...driver.config.properties, ...secrets },
      };
    }),
  };
}

const ajv = new Ajv({ discriminator: true, useDefaults: true, allErrors: false });
let compiled: ReturnType<typeof ajv.compile> | undefined;
/** Compiled on first use, so that every driver is registered by then. */
const check = (value: unknown) => (compiled ??= ajv.compile({ ...schema, properties: { ...schema.properties, destination: destinationSchema() } }))(value);

export type BackupConfigUpdate = BackupConfig;

/** Validate a config body; the error names the field, e.g. "destination.bucket is required". */
export function parseBackupConfig(body: unknown): BackupConfigUpdate {
  const copy = structuredClone(body);
  if (!check(copy)) throw new LdsError("validation_error", describe(compiled!.errors![0]!), { hint: "See docs/admin-api.md for the configuration's shape." });
  const config = copy as unknown as BackupConfigUpdate;
  if (config.encryption.recipients.length) {
    try {
      checkRecipients(config.encryption.recipients);
    } catch (err) {
      throw new LdsError("validation_error", `encryption.recipients: ${(err as Error).message}`, { hint: "Give age public keys (age1…); age-keygen -y IDENTITY prints the one of an identity." });
    }
  }
  checkAbsolutePath(config.destination);
  return config;
}

let compiledDestination: ReturnType<typeof ajv.compile> | undefined;
/** The body of POST /api/backup/test-connection: `{destination}`, the same shape as in the configuration. */
export function parseDestinationTest(body: unknown): DestinationConfig {
  const copy = structuredClone(body);
  const check = (compiledDestination ??= ajv.compile({ type: "object", additionalProperties: false, required: ["destination"], properties: { destination: destinationSchema() } }));
  if (!check(copy)) throw new LdsError("validation_error", describe(check.errors![0]!), { hint: 'Send {"destination": …} as in the backup configuration.' });
  const destination = (copy as { destination: DestinationConfig }).destination;
  checkAbsolutePath(destination);
  return destination;
}

/** A local destination's path is resolved by the server: a relative one would depend on its working directory. */
function checkAbsolutePath(destination: DestinationConfig): void {
  if (destination.type === "local" && typeof destination.path === "string" && !path.isAbsolute(destination.path)) {
    throw new LdsError("validation_error", "destination.path must be an absolute path.", { hint: "For example /var/backups/lds." });
  }
}

function describe(error: ErrorObject): string {
  const field = error.instancePath.slice(1).replace(/\//g, ".") || "body";
  if (error.keyword === "required") return `${field === "body" ? "" : `${field}.`}${error.params.missingProperty} is required.`;
  if (error.keyword === "additionalProperties") return `${field === "body" ? "" : `${field}.`}${error.params.additionalProperty} is not a known field.`;
  if (error.keyword === "discriminator")
    return `${field}.type must be ${destinationDrivers()
      .map((d) => JSON.stringify(d.kind))
      .sort()
      .join(" or ")}.`;
  if (error.keyword === "enum") return `${field} must be one of ${(error.params.allowedValues as string[]).map((v) => JSON.stringify(v)).join(", ")}.`;
  if (error.keyword === "const") return `${field} must be ${JSON.stringify(error.params.allowedValue)}.`;
  return `${field} ${error.message}.`;
}
