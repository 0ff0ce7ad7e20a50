import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorMessage } from "../components/error-message.js";
import { DataTable } from "../components/table-wrap.js";
import { bytes, dateTime } from "../format.js";
import type { ArchiveUpload, ArchiveValidation, RestoreStaged } from "../../server/api-types.js";

/** An age identity or passphrase typed for an encrypted archive: sent with validation and staging, never stored. */
export interface Keys {
  identity: string;
  passphrase: string;
}

/** An archive of the destination as validated, or an upload (an encrypted one is checked only when staged). */
export type ArchivePreview = ArchiveValidation | ArchiveUpload;

export const keysBody = (keys: Keys) => ({ ...(keys.identity.trim() ? { identity: keys.identity } : {}), ...(keys.passphrase ? { passphrase: keys.passphrase } : {}) });

/** What the archive holds, whether it can be restored here, and the typed confirmation that stages it. */
export function Preview(props: { preview: ArchivePreview; keys: Keys; volumeName: string | undefined; onBack: () => void; onStaged: (stagedAt: string) => void }) {
  const { preview, keys, volumeName, onBack, onStaged } = props;
  const [confirming, setConfirming] = useState(false);
  // An encrypted upload is checked when it is staged, with the identity given above: nothing is known of it yet.
  const lockedUpload = "encrypted" in preview;
  const checked = "encrypted" in preview ? undefined : preview;
  const [error, setError] = useState<unknown>();
  const source = "uploadId" in preview ? { uploadId: preview.uploadId } : { name: preview.name };
  return (
    <div class="panel" data-testid="restore-preview">
      <h2>{"name" in preview ? preview.name : "Uploaded archive"}</h2>
      <dl>
        <dt>Created</dt>
        <dd>{dateTime(checked?.createdAt)}</dd>
        <dt>Made by</dt>
        <dd>
          LDS {checked?.appVersion ?? "?"}, schema {checked?.schemaVersion ?? "?"}
        </dd>
        <dt>Size</dt>
        <dd>{bytes(checked?.size)}</dd>
        <dt>Encryption</dt>
        <dd data-testid="encryption">{encryptionWords(preview)}</dd>
        <dt>Can be restored here</dt>
        <dd data-testid="restorable">
          {lockedUpload
            ? "checked when staged, with the identity or passphrase given"
            : preview.restorable
              ? checked?.needsMigration
                ? "yes (its schema is migrated when the server starts)"
                : "yes"
              : `no: ${preview.reason}`}
        </dd>
      </dl>
      {preview.restorable === false && <p class="hint">Upgrade LDS to a version that reads this archive, then restore it.</p>}
      {checked && (
        <DataTable label="Libraries in the archive" columns={["Library", "State", "Snippets"]} caption={`${checked.libraries.length} libraries in the archive`}>
          {checked.libraries.map((l) => (
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
              const staged = await api<RestoreStaged>("POST", "/api/restore/stage", { ...source, ...keysBody(keys), confirm: true });
              onStaged(staged.stagedAt);
            } catch (err) {
              setError(err);
            }
          }}
        >
          <p>
            The server restarts and replaces its data with this archive. The current data is kept in a <code>pre-restore-…</code> directory of the data volume, from which it can be put back.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** The archive's encryption in words: the kind of its recipients and how many (an age header never names them). */
function encryptionWords(preview: ArchivePreview): string {
  if ("encrypted" in preview) return "age";
  const stanzas = preview.encryption?.stanzas;
  if (!stanzas) return "none";
  if (stanzas.includes("scrypt")) return "age, with a passphrase";
  return `age, for ${stanzas.length} recipient${stanzas.length === 1 ? "" : "s"}`;
}
