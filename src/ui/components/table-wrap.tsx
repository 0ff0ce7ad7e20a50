import type { ComponentChildren } from "preact";

/** A table that scrolls sideways on a narrow screen: focusable and named, so that a keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
