import { ApiError } from "../api.js";

/** An error as the API gave it: what happened, then what to do (the hint), announced to screen readers. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : null;
  const message = api ? api.message : error instanceof Error ? error.message : String(error);
  return (
    <div class="error" role="alert">
      <p class="error-message">{message}</p>
      {api?.hint && <p class="error-hint">{api.hint}</p>}
      {api?.code && <p class="error-code">{api.code}</p>}
    </div>
  );
}
