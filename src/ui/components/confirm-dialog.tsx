import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export interface ConfirmProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** A word the operator must type to confirm (the restore): guards against a confirmation clicked by habit. */
  typeToConfirm?: string;
  onConfirm: () => void;
  onCancel: () => void;
}

/** Every destructive action asks first, in a modal dialog (the browser keeps focus inside it; Escape cancels). */
export function ConfirmDialog({ title, children, confirmLabel, typeToConfirm, onConfirm, onCancel }: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const allowed = typeToConfirm === undefined || typed === typeToConfirm;
  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="dialog-title" onCancel={(e) => (e.preventDefault(), onCancel())}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (allowed) onConfirm();
        }}
      >
        <h2 id="dialog-title">{title}</h2>
        <div class="dialog-body">{children}</div>
        {typeToConfirm !== undefined && (
          <p>
            <label for="confirm-word">
              Type <strong class="confirm-word">{typeToConfirm}</strong> to confirm
            </label>
            <input id="confirm-word" autocomplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
          </p>
        )}
        <div class="actions">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!allowed}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
