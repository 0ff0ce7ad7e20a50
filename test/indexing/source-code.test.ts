import { describe, expect, it } from "vitest";
import { documentedDeclarations } from "../../src/indexing/source-code.js";

describe("generateDocs: documented exports", () => {
  it("reads TypeScript/JavaScript doc comments of exported functions, classes, interfaces and arrow constants", () => {
    const source = `import x from "y";
/**
 * Create a widget of the given size.
 * @param size one to five
 */
export function createWidget(size: number): Widget {
  return new Widget(size);
}

/** A widget renders one value. */
export class Widget extends Base {
}

/** Options for a gadget. */
export interface GadgetOptions {
  rows: number;
}

/** Parse a size from text. */
export const parseSize = (text: string): number => Number(text);

/** Not exported: left out. */
function internal() {}

export function undocumented() {}
`;
    expect(documentedDeclarations(source, "src/widget.ts").map((s) => [s.title, s.description, s.content, s.language])).toEqual([
      ["createWidget", "Create a widget of the given size.", "export function createWidget(size: number): Widget", "typescript"],
      ["Widget", "A widget renders one value.", "export class Widget extends Base", "typescript"],
      ["GadgetOptions", "Options for a gadget.", "export interface GadgetOptions", "typescript"],
      ["parseSize", "Parse a size from text.", "export const parseSize = (text: string): number =>", "typescript"],
    ]);
  });

  it("reads Python docstrings of public top-level functions and classes", () => {
    const source = `def load(path: str) -> Frame:\n    """Load a file into a frame."""\n    return Frame(path)\n\ndef _private():\n    """hidden"""\n\nclass Frame:\n    '''A table of rows.'''\n    pass\n`;
    expect(documentedDeclarations(source, "pkg/io.py").map((s) => [s.title, s.description, s.content])).toEqual([
      ["load", "Load a file into a frame.", "def load(path: str) -> Frame:"],
      ["Frame", "A table of rows.", "class Frame:"],
    ]);
  });

  it("reads Go comments of exported funcs, methods and types", () => {
    const source = `package queue\n\n// Push adds a job to the queue.\nfunc (q *Queue) Push(job Job) error {\n\treturn nil\n}\n\n// Queue holds jobs in order.\ntype Queue struct {\n}\n\n// helper is not exported.\nfunc helper() {}\n`;
    expect(documentedDeclarations(source, "queue/queue.go").map((s) => [s.title, s.description, s.content])).toEqual([
      ["Push", "Push adds a job to the queue.", "func (q *Queue) Push(job Job) error"],
      ["Queue", "Queue holds jobs in order.", "type Queue struct"],
    ]);
  });
});
