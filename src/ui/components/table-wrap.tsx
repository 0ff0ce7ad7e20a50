import type { ComponentChildren } from "preact";

/** A table that scrolls sideways on a narrow screen: focusable and named, so that a keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/** A data table: column headings ("" for a column of actions, named for screen readers only), then the rows. */
export function DataTable(props: { label: string; columns: string[]; testId?: string; caption?: string; children: ComponentChildren }) {
  return (
    <TableWrap label={props.label}>
      <table data-testid={props.testId}>
        {props.caption && <caption>{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((column, i) => (
              <th key={i} scope="col">
                {column || <span class="sr-only">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </TableWrap>
  );
}
