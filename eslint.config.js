// ESLint for src/, test/, bench/, scripts/ and bin/ (`npm run lint`, part of `npm test`). Formatting is Prettier's
// job (.prettierrc.json): neither config below has a layout rule, so the two never disagree. Why these packages and
// rules: docs/dependencies.md.
import js from "@eslint/js";
import { defineConfig, globalIgnores, includeIgnoreFile } from "eslint/config";
import globals from "globals";
import { fileURLToPath } from "node:url";
import tseslint from "typescript-eslint";

export default defineConfig([
  // dist/, node_modules/, data/, coverage/ and the bench's work and results folders, as git ignores them.
  includeIgnoreFile(fileURLToPath(new URL(".gitignore", import.meta.url))),
  // Test data read byte for byte, never run.
  globalIgnores(["fixtures/"]),

  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
    },
    linterOptions: {
      // A disable comment that no longer silences anything is a lie about the code below it.
      reportUnusedDisableDirectives: "error",
    },
    rules: {
      // `==` only where it reads best: `x == null` (null or undefined); everywhere else a loose comparison is a bug waiting.
      eqeqeq: ["error", "smart"],
      // An unused name is dead code or a bug, but `_` marks a parameter a signature needs and a rest sibling omits a key on purpose.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read HTTP and MCP answers and hand-edit archive manifests as `any` on purpose: the assertions check the shape, and a test
    // typing every answer would copy the API's types (27 uses in 16 test files today). src/ keeps the rule.
    files: ["test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // The dashboard runs in the browser.
    files: ["src/ui/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
]);
