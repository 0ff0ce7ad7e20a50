import { useEffect, useState } from "preact/hooks";
import { Field } from "./field.js";

/**
 * A write-only secret (the S3 secret key, an OAuth client secret). The page never receives a stored secret, only
 * whether one is set: then it shows "set" with Change and Clear. `value` is what the save sends: undefined keeps
 * the stored one, "" clears it, anything else replaces it.
 */
export function SecretField(props: { id: string; label: string; isSet: boolean; value: string | undefined; onChange: (value: string | undefined) => void; help?: string }) {
  const { id, label, isSet, value, onChange } = props;
  const [editing, setEditing] = useState(false);
  // Saved (or cleared) elsewhere: back to showing the stored state.
  useEffect(() => setEditing(false), [isSet]);
  if (isSet && !editing) {
    const clearing = value === "";
    return (
      <div class="field">
        <span class="label">{label}</span>
        <p>
          <span class="badge">{clearing ? "will be cleared when you save" : "set"}</span>{" "}
          <button type="button" onClick={() => (setEditing(true), onChange(undefined))} aria-label={`Change the ${label.toLowerCase()}`}>
            Change
          </button>{" "}
          {clearing ? (
            <button type="button" onClick={() => onChange(undefined)}>
              Keep it
            </button>
          ) : (
            <button type="button" onClick={() => onChange("")} aria-label={`Clear the ${label.toLowerCase()}`}>
              Clear
            </button>
          )}
        </p>
      </div>
    );
  }
  return (
    <Field id={id} label={label} help={props.help ?? "Stored sealed; never shown again."}>
      <input id={id} type="password" autocomplete="new-password" aria-describedby={`${id}-help`} value={value ?? ""} onInput={(e) => onChange(e.currentTarget.value || undefined)} />
    </Field>
  );
}
