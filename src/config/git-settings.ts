export interface GitUrlPolicy {
  /** Hosts (host or host:port) also allowed over plain http, for internal git servers. @default [] */
  allowHttpHosts?: string[];
  /** Largest checkout accepted. @default 512 MiB */
  maxRepositoryBytes?: number;
  /**
   * The git host whose repositories get the short library id /owner/repo; every other host's repositories are
   * /<host>/<path>, so that two hosts can never claim the same id. @default "github.com"
   */
  defaultHost?: string;
  /** A CA bundle (PEM) git trusts for https, for hosts behind an internal CA. @default the system's */
  caFile?: string;
}

export const DEFAULT_GIT_HOST = "github.com";

/** The git settings of an installation, read from its environment (docs/operations.md, "Git sources"). */
export function gitPolicyFromEnv(env: NodeJS.ProcessEnv, extraHttpHosts: string[] = []): GitUrlPolicy {
  return {
    allowHttpHosts: [...(env.LDS_GIT_ALLOW_HTTP_HOSTS ?? "").split(","), ...extraHttpHosts].map((h) => h.trim()).filter(Boolean),
    maxRepositoryBytes: Number(env.LDS_GIT_MAX_BYTES) || undefined,
    defaultHost: env.LDS_GIT_DEFAULT_HOST?.trim() || DEFAULT_GIT_HOST,
    caFile: env.LDS_GIT_CA_FILE?.trim() || undefined,
  };
}
