/**
 * `node --import tsx bench/large-strings.ts`: what reading one store answer costs by its size, on
 * this machine. The store client turns every answer into one string and parses it; a string longer
 * than V8's largest ordinary object (128 KB) gets pages of its own, fresh from the kernel, and each
 * of their 4 KB pages faults on first touch. A coalesced multi-search of many pages is such an
 * answer (50 pages of 20 records ≈ 850 KB). Prints the time per KB to decode a buffer into a
 * string, and to decode and parse it, with the page faults per decode, for answers of 1 to 64
 * pages of about 13.5 KB (a UTM page of 20 records as the store answers it). One of the measured
 * causes in bench/README.md.
 */
import fs from 'node:fs';

/** Minor page faults of this process so far (/proc/self/stat, field 10). */
function minorFaults(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

const hit = (i: number): unknown => ({
  _index: 'ecs-bench140k-endpoints-000001',
  _id: `utm-${i}`,
  _version: 1,
  _seq_no: 98_181 + i,
  _primary_term: 1,
  _score: null,
  _source: {
    id: `utm-${i}`,
    orgId: 'msp-0-c0-s3',
    type: 'VC_UTM',
    createdAt: '2026-11-29T02:10:53.095Z',
    updatedAt: '2026-11-29T02:10:53.095Z',
    createdBy: { username: 'bench-seed', authenticator: 'none' },
    updatedBy: { username: 'bench-seed', authenticator: 'none' },
    deleted: false,
    connectionStatus: 'CONNECTED',
    serialId: `Q2XX-${i}`,
    siteId: 'site-0',
    model: 'MX64',
    lastMacAddress: '00:18:0a:00:00:00',
    externalStatus: 'ACTIVE',
    wanStatus: 'WAN2',
    site: { id: 'site-0', orgName: 'Customer 0', displayName: 'Site 0' },
    orgPath: ['msp-0', 'msp-0-c0', 'msp-0-c0-s3'],
  },
  sort: [`utm-${i}`],
});
const page = JSON.stringify({
  took: 2,
  timed_out: false,
  _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
  hits: { total: { value: 614, relation: 'eq' }, max_score: null, hits: Array.from({ length: 20 }, (_, i) => hit(i)) },
  status: 200,
});

console.log(`one page: ${(page.length / 1024).toFixed(1)} KB`);
console.log('| pages in the answer | KB | decode µs/KB | decode + parse µs/KB | faults per decode |');
console.log('|---|---|---|---|---|');
for (const pages of [1, 4, 8, 9, 10, 16, 32, 64]) {
  const body = Buffer.from(`{"took":3,"responses":[${Array.from({ length: pages }, () => page).join(',')}]}`);
  const kb = body.length / 1024;
  const reps = Math.max(20, Math.round(4000 / pages));
  let chars = 0;
  for (let r = 0; r < reps / 10; r++) chars += body.toString('utf8').length;
  const f0 = minorFaults();
  let t0 = process.hrtime.bigint();
  for (let r = 0; r < reps; r++) chars += body.toString('utf8').length;
  const decodeNs = Number(process.hrtime.bigint() - t0) / reps;
  const faults = (minorFaults() - f0) / reps;
  t0 = process.hrtime.bigint();
  for (let r = 0; r < reps; r++) chars += (JSON.parse(body.toString('utf8')) as { responses: unknown[] }).responses.length;
  const parseNs = Number(process.hrtime.bigint() - t0) / reps;
  console.log(`| ${pages} | ${kb.toFixed(0)} | ${(decodeNs / 1000 / kb).toFixed(2)} | ${(parseNs / 1000 / kb).toFixed(2)} | ${faults.toFixed(1)} |`);
  if (chars < 0) console.log(chars);
}
