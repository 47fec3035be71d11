/** `npm run admin -- <org|token> …`: the same as `npm run ops -- admin <org|token> …`. */
import { runOps } from './ops-commands.js';

process.exit(await runOps(['admin', ...process.argv.slice(2)]));
