/**
 * PostgreSQL's COPY text format (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format"): one row per
 * line, columns separated by tabs, NULL as `\N`, and backslash escapes for backslash, tab, newline, carriage return
 * and the other control characters. A raw newline byte therefore always ends a row (one inside a value is `\n`),
 * so rows are split on bytes and decoded whole: a UTF-8 character cut between two chunks is never decoded in halves.
 */

const NEWLINE = 0x0a;
const NULL_FIELD = "\\N";
const ESCAPE = /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))/gs;
const SIMPLE: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

function unescapeField(field: string): string | null {
  if (field === NULL_FIELD) return null;
  if (!field.includes("\\")) return field;
  return field.replace(ESCAPE, (_, octal: string | undefined, hex: string | undefined, char: string | undefined) => {
    if (octal !== undefined) return String.fromCharCode(parseInt(octal, 8));
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    return SIMPLE[char!] ?? char!;
  });
}

/** Rows of a COPY … TO STDOUT text stream, chunk by chunk: fields as text, or null. */
export class CopyTextRows {
  /** Chunks of a row not complete yet: joined once its newline arrives, so that a long row is copied once. */
  private pending: Buffer[] = [];

  /** The rows completed by this chunk (a row cut at the chunk's end waits for the next). */
  push(chunk: Buffer): Array<Array<string | null>> {
    const first = chunk.indexOf(NEWLINE);
    if (first === -1) {
      if (chunk.length > 0) this.pending.push(chunk);
      return [];
    }
    const data = this.pending.length > 0 ? Buffer.concat([...this.pending, chunk]) : chunk;
    const rows: Array<Array<string | null>> = [];
    let start = 0;
    for (let end = data.indexOf(NEWLINE, start); end !== -1; end = data.indexOf(NEWLINE, start)) {
      rows.push(data.toString("utf8", start, end).split("\t").map(unescapeField));
      start = end + 1;
    }
    this.pending = start < data.length ? [data.subarray(start)] : [];
    return rows;
  }

  /** At the stream's end: a row without its newline means the stream was cut. */
  end(): void {
    if (this.pending.length > 0) throw new Error("the COPY stream ended inside a row");
  }
}

/** One value as a COPY … FROM STDIN text field: null as `\N`, bytes as bytea's hex form, text escaped. */
export function copyTextField(value: unknown): string {
  if (value === null || value === undefined) return NULL_FIELD;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  // bytea's input `\x…`, its backslash doubled as every backslash of a text field is.
  if (Buffer.isBuffer(value)) return `\\\\x${value.toString("hex")}`;
  return String(value).replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"));
}

/** One row as a line of COPY text. */
export const copyTextLine = (row: readonly unknown[]) => `${row.map(copyTextField).join("\t")}\n`;
