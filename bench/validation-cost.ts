/**
 * `node --import tsx bench/validation-cost.ts`: CPU of validating one full inventory report
 * (200 items) with the service's own joi schema and options, against a JSON round trip of the
 * same items for scale. One of the measured causes in bench/README.md.
 */
import { installedSoftwareList } from '../src/resources/software-inventory/schema.js';
import { validatePart } from '../src/http/routes.js';
import { seededInventory } from './seed.js';

const items = seededInventory(7, 200);
const N = 2000;

function timeMs(fn: () => unknown): number {
  for (let i = 0; i < N / 10; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e6 / N;
}

const joiMs = timeMs(() => validatePart(installedSoftwareList, items, 'body'));
const jsonMs = timeMs(() => JSON.parse(JSON.stringify(items)));
console.log(`joi validation of a 200-item report: ${joiMs.toFixed(3)} ms; JSON stringify + parse of it: ${jsonMs.toFixed(3)} ms`);
