/** `npm run ops -- <command>`: the ops toolkit (see ops-commands.ts and docs/operations.md). */
import { runOps } from './ops-commands.js';
import { boundHeapGrowth } from '../runtime.js';

boundHeapGrowth();

process.exit(await runOps(process.argv.slice(2)));
