/**
 * Parse a single-range `Range: bytes=…` header against a resource of `size` bytes (RFC 9110 §14.1.2).
 * Returns the inclusive [start, end], null for no (or an ignorable) header, or "unsatisfiable".
 */
export function parseRange(header: string | undefined, size: number): [number, number] | null | "unsatisfiable" {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null; // multiple or malformed ranges: send it all
  let start: number;
  let end: number;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return "unsatisfiable";
  return [start, end];
}
