import { DEFAULT_GIT_HOST, type GitUrlPolicy } from "../sources/git-url.js";

/** The git settings of an installation, read from its environment (docs/operations.md, "Git sources"). */
export function gitPolicyFromEnv(env: NodeJS.ProcessEnv, extraHttpHosts: string[] = []): GitUrlPolicy {
  return {
    allowHttpHosts: [...(env.LDS_GIT_ALLOW_HTTP_HOSTS ?? "").split(","), ...extraHttpHosts].map((h) => h.trim()).filter(Boolean),
    maxRepositoryBytes: Number(env.LDS_GIT_MAX_BYTES) || undefined,
    defaultHost: env.LDS_GIT_DEFAULT_HOST?.trim() || DEFAULT_GIT_HOST,
    caFile: env.LDS_GIT_CA_FILE?.trim() || undefined,
  };
}
