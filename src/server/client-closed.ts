import type { IncomingMessage } from "node:http";

/**
 * The errors Node and its streams raise when the other end of a request goes away: the request stream is destroyed
 * with ECONNRESET "aborted" (node:_http_server's abortIncoming) while a handler still reads the body, a pipeline from
 * it ends with ERR_STREAM_PREMATURE_CLOSE, and a write to the gone socket fails with EPIPE.
 */
const CLOSED_CONNECTION_CODES = new Set(["ECONNRESET", "ECONNABORTED", "EPIPE", "ERR_STREAM_PREMATURE_CLOSE"]);

/**
 * Whether `err` is only the client having closed its connection mid-request (a browser tab closed during an upload,
 * a script interrupted): nothing failed on our side, so it is no server error. Both must hold, so that a reset from
 * a dependency (an S3 store, a git host) while the client is still there stays an unexpected error.
 */
export function isClientClosed(err: unknown, request: IncomingMessage): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && CLOSED_CONNECTION_CODES.has(code) && (request.destroyed || request.socket?.destroyed === true);
}
