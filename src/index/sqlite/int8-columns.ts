import fs from "node:fs";
import { builtModule } from "../../util/built-module.js";

const PAGE = 64 * 1024;
/** WebAssembly's 32-bit memories stop at 4 GiB (65,536 pages). */
const MAX_PAGES = 65_536;
/** Query weights are 16-bit in the kernel (its products are exact in 32 bits). */
const MAX_WEIGHT = 32_767;

let compiled: WebAssembly.Module | undefined;

/** The SIMD kernel (int8-scan.wat, compiled by scripts/build-wasm.js), compiled once per thread. */
function kernel(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(fs.readFileSync(builtModule(import.meta.url, "./int8-scan.wasm")));
  return compiled;
}

type Accumulate4 = (scores: number, a: number, b: number, c: number, d: number, wa: number, wb: number, wc: number, wd: number, rows: number) => void;

/**
 * One quantized vector copy's memory: int8 columns and int32 scores in a WebAssembly memory of its own, which the
 * kernel reads and writes in place. Memory is handed out in 16-byte steps and only grows; a copy that is dropped
 * frees it all with its last reference.
 */
export class Int8Columns {
  private readonly memory = new WebAssembly.Memory({ initial: 0, maximum: MAX_PAGES });
  private readonly accumulate4: Accumulate4;
  private end = 0;

  constructor() {
    const instance = new WebAssembly.Instance(kernel(), { env: { memory: this.memory } });
    this.accumulate4 = instance.exports.accumulate4 as Accumulate4;
  }

  /** Bytes handed out so far. */
  get size(): number {
    return this.end;
  }

  /** Reserve `bytes` of zeros and return their offset. Views made before a call may be detached by it. */
  allocate(bytes: number): number {
    const offset = this.end;
    this.end += Math.ceil(bytes / 16) * 16;
    const missing = this.end - this.memory.buffer.byteLength;
    if (missing > 0) this.memory.grow(Math.ceil(missing / PAGE));
    return offset;
  }

  int8s(offset: number, length: number): Int8Array {
    return new Int8Array(this.memory.buffer, offset, length);
  }

  int32s(offset: number, length: number): Int32Array {
    return new Int32Array(this.memory.buffer, offset, length);
  }

  /**
   * scores[i] += Σ weights[k] × column_k[i] for i < rows, four columns per kernel call (a missing fourth is the
   * first again with weight 0). `rows` must be a multiple of 16, and the columns that long (zero-padded).
   */
  accumulate(scores: number, columns: number[], weights: number[], rows: number): void {
    const clamp = (w: number) => (w > MAX_WEIGHT ? MAX_WEIGHT : w < -MAX_WEIGHT ? -MAX_WEIGHT : w);
    for (let k = 0; k < columns.length; k += 4) {
      const at = (j: number) => (k + j < columns.length ? columns[k + j]! : columns[k]!);
      const weight = (j: number) => (k + j < columns.length ? clamp(weights[k + j]!) : 0);
      this.accumulate4(scores, at(0), at(1), at(2), at(3), weight(0), weight(1), weight(2), weight(3), rows);
    }
  }
}
