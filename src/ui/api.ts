/** The admin API as the dashboard uses it: JSON both ways, the session cookie, and errors as the API words them. */
import type { ErrorAnswer } from "../server/api-types.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const signedOutListeners = new Set<Listener>();

/** Called when a request finds the session gone (expired, logged out elsewhere, or replaced by a restore). */
export function onSignedOut(listener: Listener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/**
 * `T` is the answer's type from src/server/api-types.ts, named at the call: it is never inferred from where the
 * answer goes (`NoInfer`), so a page cannot read an answer through a shape of its own. Without it the answer is void.
 */
export async function api<T = void>(method: string, path: string, body?: unknown): Promise<NoInfer<T>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "server_unreachable", "The server did not answer.", "Check that LDS is running, then try again.");
  }
  return answerOf<T>(response, path);
}

/** Upload a file as the raw body (the restore upload), with progress. */
export function upload<T = void>(path: string, file: File, onProgress: (sent: number) => void): Promise<NoInfer<T>> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("POST", path);
    request.setRequestHeader("content-type", "application/octet-stream");
    request.upload.onprogress = (event) => onProgress(event.loaded);
    request.onerror = () => reject(new ApiError(0, "server_unreachable", "The upload was interrupted.", "Check the connection, then upload again."));
    request.onload = () => {
      const response = new Response(request.responseText, { status: request.status, headers: { "content-type": request.getResponseHeader("content-type") ?? "" } });
      answerOf<T>(response, path).then(resolve, reject);
    };
    request.send(file);
  });
}

async function answerOf<T>(response: Response, path: string): Promise<T> {
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (response.ok) return json as T;
  const error = (json ?? {}) as Partial<ErrorAnswer>;
  if (response.status === 401 && error.error === "not_authenticated" && path !== "/api/auth/login") {
    for (const listener of signedOutListeners) listener();
  }
  throw new ApiError(response.status, error.error ?? "http_error", error.message ?? `The server answered HTTP ${response.status}.`, error.hint);
}
