import { expect, it } from "vitest";
import { copyTextLine, CopyTextRows } from "../../../src/engine/postgres/copy-text.js";

// COPY's text format both ways: what a COPY … FROM STDIN line says, the parser reads back, however the stream is cut.

const rows = [
  ["plain", null, "", "\\N as text", "tab\tnewline\ncr\rbackslash\\end"],
  ["ä 漢字 🦆", "trailing backslash \\", "\\x41 stays text", "\u0001 control", "x"],
];

/** The bytes of `lines` fed to a parser in pieces of `size` bytes: the rows it reads. */
function parseInPieces(text: string, size: number): Array<Array<string | null>> {
  const bytes = Buffer.from(text, "utf8");
  const parser = new CopyTextRows();
  const read: Array<Array<string | null>> = [];
  for (let at = 0; at < bytes.length; at += size) read.push(...parser.push(bytes.subarray(at, at + size)));
  parser.end();
  return read;
}

it("reads back every value a line carries, NULL apart from the text \\N, whatever the chunk boundaries (inside an escape or a UTF-8 character)", () => {
  const text = rows.map(copyTextLine).join("");
  for (const size of [1, 2, 3, 5, 7, 64, text.length]) expect(parseInPieces(text, size), `chunks of ${size} bytes`).toEqual(rows);
});

it("reads PostgreSQL's own escapes: \\b \\f \\v, octal and hex bytes", () => {
  expect(parseInPieces("a\\bb\\fc\\vd\t\\101\\x42\n", 4)).toEqual([["a\bb\fc\vd", "AB"]]);
});

it("writes numbers as digits and bytes in bytea's hex form, its backslash escaped", () => {
  expect(copyTextLine([1, 2n ** 60n, Buffer.from([0, 255]), null])).toBe("1\t1152921504606846976\t\\\\x00ff\t\\N\n");
});

it("refuses a stream cut inside a row", () => {
  const parser = new CopyTextRows();
  expect(parser.push(Buffer.from("a\tb\nc\t"))).toEqual([["a", "b"]]);
  expect(() => parser.end()).toThrow(/inside a row/);
});
