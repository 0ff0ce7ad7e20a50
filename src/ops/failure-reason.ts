import { describeFailure, isDiskFull, LdsError } from "../errors.js";
import { withoutPath } from "../util/hide-path.js";

/** What a library's failed state says of an error that is not one of ours: its own text is for the log only. */
const UNEXPECTED = "internal_error: an unexpected error on the server; the server's log has the details.";

/**
 * Why a library's processing failed, as its state records it. That reason is shown to whoever may read the library
 * (/v2/context's no_snippets_found, anonymous readers of a public library included) and on the dashboard, so it
 * names no file of the server (issue 39): our own errors keep their words, with the data volume's path replaced
 * (git's stderr may quote the work folder); any other error (a system error such as `ENOTDIR: not a directory,
 * mkdir '<data-dir>/work/…'`, a library's internals) is only named as unexpected. The job runner logs the error
 * itself, path and all, for the operator.
 */
export function recordedFailure(err: unknown, volumeRoot: string): string {
  const reason = err instanceof LdsError || isDiskFull(err) ? describeFailure(err) : UNEXPECTED;
  return withoutPath(reason, volumeRoot);
}
