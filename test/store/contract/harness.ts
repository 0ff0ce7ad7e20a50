import { afterEach, beforeEach, expect } from "vitest";
import { LdsError } from "../../../src/errors.js";
import type { Store } from "../../../src/store/store.js";

/** An engine's store, opened fresh (empty, at the current schema) for one test. */
export interface OpenedStore {
  store: Store;
  /** What no operation of the contract writes, written the engine's own way (a redirect is made by a migration only). */
  seed: { redirect(oldId: string, newId: string): Promise<void> };
  close(): Promise<void>;
}

export type OpenStore = () => Promise<OpenedStore>;

/** A fresh store before each test of the calling `describe`, closed after it; read `.store` inside a test. */
export function freshStore(open: OpenStore): { readonly store: Store; readonly seed: OpenedStore["seed"] } {
  let opened: OpenedStore | undefined;
  beforeEach(async () => {
    opened = await open();
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return {
    get store() {
      return opened!.store;
    },
    get seed() {
      return opened!.seed;
    },
  };
}

/** The operation fails with an LdsError of this code. */
export async function expectLdsError(operation: Promise<unknown>, code: string): Promise<void> {
  const error = await operation.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(LdsError);
  expect((error as LdsError).code).toBe(code);
}

/** Wait until the clock has moved on, so that two records written one after the other are not at the same instant. */
export async function nextMillisecond(): Promise<void> {
  const start = Date.now();
  while (Date.now() <= start + 1) await new Promise((resolve) => setImmediate(resolve));
}

/** An API key as `Authorization` carries it. */
export const bearer = (key: string) => `Bearer ${key}`;

/** The runner the contract's claims are made for, and a lease no test outlives (tests of expiry give shorter ones). */
export const OWNER = "host-a:100:aaaa";
export const LEASE_MS = 60_000;

/** Wait until `check` answers a value (not undefined or false), looking every 20 ms; fails after `timeoutMs`. */
export async function until<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
