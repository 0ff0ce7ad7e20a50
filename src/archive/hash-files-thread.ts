import { builtModule } from "../util/built-module.js";
import { workerAnswer } from "../util/worker-answer.js";

const ENTRY = builtModule(import.meta.url, "./hash-files-entry.js");

export interface HashedFile {
  file: string;
  sha256: string;
  size: number;
}

export type HashFilesAnswer = { ok: true; files: HashedFile[] } | { ok: false; message: string };

/**
 * SHA-256 and size of each file, on a thread of its own. A backup hashes each snapshot file while the next step
 * (the next database's copy, the manifest's description of the snapshot) runs on the other core, instead of
 * after it. The thread imports only the hashing, so it adds a few MiB, not a second copy of LDS.
 */
export async function hashFilesInThread(files: string[], options: { yieldToRequests: boolean; signal?: AbortSignal }): Promise<HashedFile[]> {
  const answer = await workerAnswer<HashFilesAnswer>(
    ENTRY,
    { files, yieldToRequests: options.yieldToRequests },
    {
      what: "the thread hashing the snapshot",
      signal: options.signal,
      stoppedMessage: "The backup was interrupted while it hashed the snapshot; no archive was written.",
    },
  );
  if (!answer.ok) throw new Error(`hashing the snapshot failed: ${answer.message}`);
  return answer.files;
}
