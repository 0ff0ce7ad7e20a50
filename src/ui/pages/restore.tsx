import { useEffect, useState } from "preact/hooks";
import { api, upload } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";
import { useLoad } from "../components/use-load.js";
import { bytes, dateTime } from "../format.js";
import type { ArchiveListing, ArchiveUpload, ArchiveValidation, RestoreLimits, RestoreOutcomeAnswer } from "../../server/api-types.js";
import { Outcome, WaitForOutcome } from "./restore-outcome.js";
import { keysBody, Preview, type ArchivePreview, type Keys } from "./restore-preview.js";

/** The staged restore this browser asked for, kept across the restart (and a sign-in the restored data may ask for). */
const PENDING = "lds.pendingRestore";

type Step = { kind: "choose" } | { kind: "preview"; preview: ArchivePreview; keys: Keys } | { kind: "waiting"; stagedAt: string };

/** Choose or upload an archive, see what it holds, confirm by typing the volume's name, then follow the restart. */
export function RestorePage() {
  const pending = sessionStorage.getItem(PENDING);
  const [step, setStep] = useState<Step>(pending ? { kind: "waiting", stagedAt: pending } : { kind: "choose" });
  const limits = useLoad(() => api<RestoreLimits>("GET", "/api/restore/limits"));
  const last = useLoad(() => api<RestoreOutcomeAnswer>("GET", "/api/restore/outcome"));
  return (
    <section>
      <h1>Restore</h1>
      {step.kind === "choose" && (
        <>
          {last.data?.outcome && (
            <details class="panel">
              <summary>
                Last restore: {last.data.outcome.result}, {dateTime(last.data.outcome.finishedAt)}
              </summary>
              <Outcome outcome={last.data.outcome} />
            </details>
          )}
          <Choose uploadLimit={limits.data?.uploadLimitBytes} onPreview={(preview, keys) => setStep({ kind: "preview", preview, keys })} />
        </>
      )}
      {step.kind === "preview" && (
        <Preview
          preview={step.preview}
          keys={step.keys}
          volumeName={limits.data?.volumeName}
          onBack={() => setStep({ kind: "choose" })}
          onStaged={(stagedAt) => {
            sessionStorage.setItem(PENDING, stagedAt);
            setStep({ kind: "waiting", stagedAt });
          }}
        />
      )}
      {step.kind === "waiting" && (
        <WaitForOutcome
          stagedAt={step.stagedAt}
          onDone={() => sessionStorage.removeItem(PENDING)}
          onAgain={() => {
            sessionStorage.removeItem(PENDING);
            setStep({ kind: "choose" });
            void last.reload();
          }}
        />
      )}
    </section>
  );
}

function Choose({ uploadLimit, onPreview }: { uploadLimit: number | undefined; onPreview: (p: ArchivePreview, keys: Keys) => void }) {
  const archives = useLoad(() => api<ArchiveListing>("GET", "/api/backups"));
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [keys, setKeys] = useState<Keys>({ identity: "", passphrase: "" });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<string | null>(null);
  useEffect(() => {
    const listed = archives.data?.archives ?? [];
    // The Backups page links here with ?archive=NAME. The address is anyone's to write: a name is taken from it
    // only when it is one of the listed archives, so that it cannot make the page ask for (and then show back)
    // a name of its choosing.
    const wanted = new URLSearchParams(location.search).get("archive");
    if (!name && listed[0]) setName(listed.find((a) => a.name === wanted)?.name ?? listed[0].name);
  }, [archives.data]);
  const encrypted = name.endsWith(".age") || (file?.name.endsWith(".age") ?? false);

  async function validateNamed() {
    setError(undefined);
    setBusy("Checking the archive…");
    try {
      onPreview(await api<ArchiveValidation>("POST", "/api/restore/validate", { name, ...keysBody(keys) }), keys);
    } catch (err) {
      setError(err);
    }
    setBusy(null);
  }

  async function validateUpload() {
    if (!file) return;
    setError(undefined);
    try {
      const answer = await upload<ArchiveUpload>("/api/restore/upload", file, (sent) => setBusy(`Uploading… ${bytes(sent)} of ${bytes(file.size)}`));
      onPreview(answer, keys);
    } catch (err) {
      setError(err);
    }
    setBusy(null);
  }

  return (
    <>
      <div class="panel">
        <h2>From the backup destination</h2>
        <ErrorMessage error={archives.error} />
        {archives.data && archives.data.archives.length === 0 && <p>No archives at {archives.data.destination}.</p>}
        {archives.data && archives.data.archives.length > 0 && (
          <Field id="archive" label={`Archive at ${archives.data.destination}`}>
            <select id="archive" value={name} onChange={(e) => setName(e.currentTarget.value)}>
              {archives.data.archives.map((a) => (
                <option key={a.name} value={a.name}>
                  {a.name} ({bytes(a.size)}, {dateTime(a.modifiedAt)})
                </option>
              ))}
            </select>
          </Field>
        )}
        <button type="button" class="primary" disabled={!name || busy !== null} onClick={() => void validateNamed()}>
          Check this archive
        </button>
      </div>
      <div class="panel">
        <h2>Or upload an archive</h2>
        <Field id="upload" label="Archive file" help={uploadLimit ? `Up to ${bytes(uploadLimit)}. Larger archives: copy them to the server and run lds-restore.` : undefined}>
          <input id="upload" type="file" accept=".tar,.gz,.age" aria-describedby="upload-help" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </Field>
        <button type="button" disabled={!file || busy !== null} onClick={() => void validateUpload()}>
          Upload and check
        </button>
      </div>
      {encrypted && (
        <div class="panel">
          <h2>Encrypted archive</h2>
          <p class="help">Used for this request only: never stored or logged.</p>
          <Field id="identity" label="age identity (AGE-SECRET-KEY-1…)">
            <textarea id="identity" rows={2} spellcheck={false} autocomplete="off" value={keys.identity} onInput={(e) => setKeys({ ...keys, identity: e.currentTarget.value })} />
          </Field>
          <Field id="passphrase" label="or passphrase">
            <input id="passphrase" type="password" autocomplete="off" value={keys.passphrase} onInput={(e) => setKeys({ ...keys, passphrase: e.currentTarget.value })} />
          </Field>
        </div>
      )}
      <div aria-live="polite">{busy && <p class="busy">{busy}</p>}</div>
      <ErrorMessage error={error} />
    </>
  );
}
