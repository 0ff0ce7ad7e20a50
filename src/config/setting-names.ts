/**
 * How each shell names a setting that an error's hint refers to. A hint names a setting by its key in braces
 * (`{dataDir}`, `{s3.region}`: see `setting()` in errors.ts); the CLI renders it as its flag and environment variable,
 * the server (and a dashboard) as its configuration field or environment variable. Destination settings are declared
 * by their drivers (destinations/registry.ts); these are the others.
 */
export interface SettingName {
  /** CLI flag(s), without dashes. */
  flags?: string[];
  env?: string;
  /** Field of a configuration the server stores (PUT /api/backup/config). */
  field?: string;
}

export const GENERAL_SETTINGS: Record<string, SettingName> = {
  dataDir: { flags: ["data-dir"], env: "LDS_DATA_DIR" },
  listen: { flags: ["host", "port"] },
  keep: { flags: ["keep"], field: "retention.keep" },
  searchTimeout: { env: "LDS_SEARCH_TIMEOUT_MS" },
  gitCaFile: { env: "LDS_GIT_CA_FILE" },
  gitHttpHosts: { flags: ["allow-http-host"], env: "LDS_GIT_ALLOW_HTTP_HOSTS" },
  encryptionRecipients: { flags: ["age-recipient"], env: "LDS_AGE_RECIPIENTS", field: "encryption.recipients" },
  ageIdentity: { flags: ["identity"], env: "LDS_AGE_IDENTITY_FILE" },
  agePassphrase: { flags: ["passphrase-file"], env: "LDS_AGE_PASSPHRASE_FILE" },
  licence: { env: "LDS_LICENSE" },
  embeddingsUrl: { env: "LDS_EMBEDDINGS_URL" },
  databaseUrl: { env: "LDS_DATABASE_URL" },
  secretKeyFile: { env: "LDS_SECRET_KEY_FILE" },
  databaseCaFile: { env: "LDS_DATABASE_CA_FILE" },
};
