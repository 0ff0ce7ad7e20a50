import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorMessage } from "../components/error-message.js";
import { DataTable } from "../components/table-wrap.js";
import { bytes, dateTime } from "../format.js";
import type { ArchivePreview } from "../types.js";

/** An age identity or passphrase typed for an encrypted archive: sent with validation and staging, never stored. */
export interface Keys {
  identity: string;
  passphrase: string;
}

export const keysBody = (keys: Keys) => ({ ...(keys.identity.trim() ? { identity: keys.identity } : {}), ...(keys.passphrase ? { passphrase: keys.passphrase } : {}) });

/** What the archive holds, whether it can be restored here, and the typed confirmation that stages it. */
export function Preview(props: { preview: ArchivePreview; keys: Keys; volumeName: string | undefined; onBack: () => void; onStaged: (stagedAt: string) => void }) {
  const { preview, keys, volumeName, onBack, onStaged } = props;
  const [confirming, setConfirming] = useState(false);
  // An encrypted upload is checked when it is staged, with the identity given above.
  const lockedUpload = preview.encrypted === true && preview.restorable === null;
  const [error, setError] = useState<unknown>();
  const source = preview.uploadId ? { uploadId: preview.uploadId } : { name: preview.name };
  return (
    <div class="panel" data-testid="restore-preview">
      <h2>{preview.name ?? "Uploaded archive"}</h2>
      <dl>
        <dt>Created</dt>
        <dd>{dateTime(preview.createdAt)}</dd>
        <dt>Made by</dt>
        <dd>LDS {preview.appVersion ?? "?"}, schema {preview.schemaVersion ?? "?"}</dd>
        <dt>Size</dt>
        <dd>{bytes(preview.size)}</dd>
        <dt>Encryption</dt>
        <dd>{preview.encryption ?? "none"}</dd>
        <dt>Can be restored here</dt>
        <dd data-testid="restorable">{lockedUpload ? "checked when staged, with the identity or passphrase given" : preview.restorable ? (preview.needsMigration ? "yes (its schema is migrated when the server starts)" : "yes") : `no: ${preview.reason}`}</dd>
      </dl>
      {preview.restorable === false && <p class="hint">Upgrade LDS to a version that reads this archive, then restore it.</p>}
      {preview.libraries && (
        <DataTable label="Libraries in the archive" columns={["Library", "State", "Snippets"]} caption={`${preview.libraries.length} libraries in the archive`}>
          {preview.libraries.map((l) => (
            <tr key={l.id}>
              <td>{l.id}</td>
              <td>{l.state}</td>
              <td>{l.snippets}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="button" onClick={onBack}>
          Back
        </button>
        <button type="button" class="danger" disabled={!(preview.restorable || lockedUpload) || !volumeName} onClick={() => setConfirming(true)}>
          Restore this archive…
        </button>
      </div>
      {confirming && volumeName && (
        <ConfirmDialog
          title="Replace the data with this archive?"
          confirmLabel="Stage the restore and restart"
          typeToConfirm={volumeName}
          onCancel={() => setConfirming(false)}
          onConfirm={async () => {
            setConfirming(false);
            try {
              const staged = await api<{ stagedAt: string }>("POST", "/api/restore/stage", { ...source, ...keysBody(keys), confirm: true });
              onStaged(staged.stagedAt);
            } catch (err) {
              setError(err);
            }
          }}
        >
          <p>
            The server restarts and replaces its data with this archive. The current data is kept in a <code>pre-restore-…</code> directory of the data volume, from
            which it can be put back.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
