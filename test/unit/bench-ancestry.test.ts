/**
 * The bench's direct writes carry their records' ancestry as the service stamps it (bench/seed.ts,
 * used by bench/scenarios.ts), so the service never takes them for records of an older release
 * and stamps them in the background while it is measured; a run reports any it did stamp
 * (bench/service-process.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ancestryOf, seededIds, QUICK } from '../../bench/seed.js';
import { stampedInBackground } from '../../bench/service-process.js';
import { OrgLinks } from '../../src/resources/organizations/org-links.js';

describe('bench: the ancestry of the direct writes', () => {
  it('is the path the service’s organization tree gives, at every level of the seeded tree', () => {
    const seeded = seededIds(QUICK);
    const tree = new OrgLinks();
    for (const org of seeded.orgs) tree.link(org, seeded.parents.get(org));
    const of = ancestryOf(seeded);
    const sample = [...seeded.roots, ...seeded.orgs.filter((_, i) => i % 97 === 0), ...seeded.sensors.slice(0, 50).map((s) => s.orgId)];
    for (const org of sample) expect(of(org), org).to.deep.equal(tree.pathOf(org));
    expect(of('msp-0-c0-s0-l0')).to.deep.equal(['msp-0', 'msp-0-c0', 'msp-0-c0-s0', 'msp-0-c0-s0-l0']);
    // Asked again, the same path (kept per organization).
    expect(of('msp-0-c0-s0-l0')).to.deep.equal(['msp-0', 'msp-0-c0', 'msp-0-c0-s0', 'msp-0-c0-s0-l0']);
  });

  it('a run counts the records the service stamped in the background, from its log', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stamped-'));
    const file = path.join(dir, 'service.log');
    try {
      const line = (o: object): string => JSON.stringify({ level: 30, time: '2026-11-29T06:06:01.980Z', service: 'endpoint-control-service', ...o });
      fs.writeFileSync(
        file,
        [
          line({ requestId: 'r1', method: 'POST', route: '/x', status: 201, msg: 'request' }),
          line({ records: 14926, stamped: 15843, elapsedMs: 2254, msg: "org paths: 15843 records written without their organization's ancestry (by an older release) were stamped" }),
          'console: http://localhost:1/console',
          line({ records: 10, stamped: 10, elapsedMs: 5, msg: "org paths: 10 records written without their organization's ancestry (by an older release) were stamped" }),
          '',
        ].join('\n'),
      );
      expect(await stampedInBackground(file)).to.equal(15853);
      fs.writeFileSync(file, `${line({ msg: 'request', status: 200 })}\n`);
      expect(await stampedInBackground(file)).to.equal(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
