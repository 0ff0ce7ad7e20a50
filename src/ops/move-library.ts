import { LdsError } from "../errors.js";
import type { GitUrlPolicy } from "../config/git-settings.js";
import { checkRepositoryUrl } from "../sources/git-url.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";

export interface MoveRequest {
  libraryId: string;
  /** The new repository URL. */
  to: string;
  /** The branch the library serves from now on; absent: the new repository's default branch. */
  branch?: string;
  /** Who did it, for the audit log (the operator's OS user). */
  actor: string;
}

/**
 * Point a library at a new source (an operator's decision, `lds libraries move`): the library keeps its id and
 * serves its current snippets until the new source is indexed (a job is queued for the server). Recorded in the
 * audit log with the old and the new source, so it can be reviewed and undone by moving it back.
 */
export async function moveLibrary({ store }: { store: Store }, policy: GitUrlPolicy, request: MoveRequest): Promise<{ from: string; to: string }> {
  const library = await store.libraries.find(request.libraryId);
  if (!library) throw new LdsError("library_not_found", `No library ${request.libraryId}.`, { hint: `List them: ${action("library.list")}.` });
  if (library.source !== "git") throw new LdsError("validation_error", `${request.libraryId} is a wiki space; only git libraries can be moved.`);
  const repo = checkRepositoryUrl(request.to, policy);
  const other = (await store.libraries.bySource(repo.sourceKey)).find((l) => l.id !== library.id && l.private === library.private && l.teamId === library.teamId);
  if (other) {
    throw new LdsError("source_conflict", `${repo.sourceKey} is already the source of ${other.id}; nothing was changed.`, { hint: `Use ${other.id}, or move it elsewhere first.` });
  }
  const from = library.sourceUrl ?? "";
  await store.libraries.relocate({ libraryId: library.id, sourceUrl: repo.url.href, sourceKey: repo.sourceKey, branch: request.branch, teamId: library.teamId, actor: request.actor, from });
  return { from, to: repo.url.href };
}
