import path from "node:path";
import type { CopiedFile } from "../engine.js";
import { builtModule } from "../../util/built-module.js";
import { errorFromThread, workerAnswer, type ThreadError } from "../../util/worker-answer.js";

const ENTRY = builtModule(import.meta.url, "./copy-database-entry.js");

export interface CopyInThreadOptions {
  needsVectorExtension: boolean;
  /** Lower the thread's priority: the server's requests come first. */
  yieldToRequests: boolean;
  /** Called when the copy's state is fixed, before its pages are copied (copyDatabase's onPinned). */
  onPinned: () => void;
}

export type CopyDatabaseAnswer = { ok: true; copy: CopiedFile } | { ok: false; error: ThreadError };

/**
 * copyDatabase on a thread of its own, which imports only the copy, then the copy's SHA-256 and size on the same
 * thread: a backup copies vectors.db there while lds.db is copied where runHeavy puts it, so the two copies (1.5-3 s
 * each per GiB of volume, mostly system calls) use both cores instead of one after the other, and the hash follows
 * the copy without waiting for a message to reach a busy event loop.
 */
export async function copyDatabaseInThread(source: string, destination: string, options: CopyInThreadOptions): Promise<CopiedFile> {
  const answer = await workerAnswer<CopyDatabaseAnswer>(
    ENTRY,
    { source, destination, needsVectorExtension: options.needsVectorExtension, yieldToRequests: options.yieldToRequests },
    {
      what: `the thread copying ${path.basename(source)}`,
      onProgress: () => options.onPinned(),
    },
  );
  if (!answer.ok) throw errorFromThread(answer.error);
  return answer.copy;
}
