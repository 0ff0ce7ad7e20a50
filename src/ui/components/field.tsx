import type { ComponentChildren } from "preact";

/** A labelled control with an optional help line tied to it for screen readers. */
export function Field({ id, label, help, children }: { id: string; label: string; help?: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {help && (
        <p class="help" id={`${id}-help`}>
          {help}
        </p>
      )}
    </div>
  );
}
