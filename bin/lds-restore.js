#!/usr/bin/env node
import { main } from "../dist/cli/main.js";
await main(process.argv.slice(2), "lds-restore");
