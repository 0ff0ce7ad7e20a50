// The real git-over-HTTP server lives in bench/lib so that benchmarks and tests use one implementation.
import { startGitHttpServer } from "../../bench/lib/git-http-server.js";

export interface TestRepo {
  url: string;
  commit(changes: Record<string, string | null>): Promise<void>;
  tag(name: string, annotated?: boolean): Promise<void>;
}

export interface GitServer {
  base: string;
  /** The directory holding the bare repositories, at <owner>/<name>.git. */
  root: string;
  requests: Array<{ url: string; authorized: boolean }>;
  /** From now on the private repositories take `token` instead (a host that stopped accepting the old one). */
  setToken(token: string): void;
  createRepo(visibility: "public" | "private", owner: string, name: string, files: Record<string, string>, branch?: string): Promise<TestRepo>;
  close(): Promise<void>;
}

export const startGitServer = (token: string): Promise<GitServer> => startGitHttpServer(token) as Promise<GitServer>;
