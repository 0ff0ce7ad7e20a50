import { seal, unseal } from "../../../src/secrets/seal.js";
import type { SettingStore } from "../../../src/store/store.js";
import type { MemoryTables } from "./tables.js";

/** The setting that records the fingerprint of the key the secrets are sealed with (the same name in every engine). */
export const FINGERPRINT_SETTING = "secret_key.fingerprint";

/** Sealed by name, as every engine seals: the name is bound into the seal. */
export function putSecret(tables: MemoryTables, name: string, value: string): void {
  tables.secrets.set(name, seal(tables.key, value, name));
}

export function getSecret(tables: MemoryTables, name: string): string | undefined {
  const sealed = tables.secrets.get(name);
  return sealed === undefined ? undefined : unseal(tables.key, sealed, name);
}

export function deleteSecret(tables: MemoryTables, name: string): void {
  tables.secrets.delete(name);
}

export function settingStore(tables: MemoryTables): SettingStore {
  return {
    get: async (key) => tables.settings.get(key),
    set: async (key, value) => void tables.settings.set(key, value),
    putIfAbsent: async (key, value) => {
      if (!tables.settings.has(key)) tables.settings.set(key, value);
      return tables.settings.get(key)!;
    },
    pruneBefore: async (prefix, before) => {
      const old = [...tables.settings.keys()].filter((key) => key.startsWith(prefix) && key.slice(prefix.length) < before);
      for (const key of old) tables.settings.delete(key);
      return old.length;
    },
    secret: async (name) => getSecret(tables, name),
    hasSecret: async (name) => tables.secrets.has(name),
    saveWithSecrets: async (key, value, secrets) => {
      // Sealing cannot fail half way (the key was checked when the store was made): set everything in one go.
      const sealed = secrets.map((s) => ({ name: s.name, value: s.value === undefined || s.value === "" ? s.value : seal(tables.key, s.value, s.name) }));
      tables.settings.set(key, value);
      for (const s of sealed) {
        if (s.value === "") tables.secrets.delete(s.name);
        else if (s.value !== undefined) tables.secrets.set(s.name, s.value);
      }
    },
    resealSecrets: async (newKey, newFingerprint) => {
      // Every secret unsealed and sealed again first; one that fails leaves everything as it was.
      const resealed = [...tables.secrets].map(([name, sealed]) => [name, seal(newKey, unseal(tables.key, sealed, name), name)] as const);
      for (const [name, sealed] of resealed) tables.secrets.set(name, sealed);
      tables.settings.set(FINGERPRINT_SETTING, newFingerprint);
      return resealed.length;
    },
  };
}
