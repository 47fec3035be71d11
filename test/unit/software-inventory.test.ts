import { expect } from 'chai';
import {
  dedupe,
  diffInventory,
  pairKey,
  reportDigest,
  softwareId,
  splitPairKey,
  toInventoryDoc,
  type InstalledSoftware,
} from '../../src/resources/software-inventory/model.js';

const owner = { id: 'ep-1', orgId: 'org-1' };
const T0 = new Date('2026-01-01T00:00:00.000Z');
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

describe('software inventory: deterministic ids', () => {
  it('is the same for the same endpoint, name and version, and differs when any part differs', () => {
    const a = softwareId('ep-1', 'Firefox', '120.0');
    expect(softwareId('ep-1', 'Firefox', '120.0')).to.equal(a);
    expect(softwareId('ep-2', 'Firefox', '120.0')).to.not.equal(a);
    expect(softwareId('ep-1', 'firefox', '120.0')).to.not.equal(a);
    expect(softwareId('ep-1', 'Firefox', '120.1')).to.not.equal(a);
    expect(a).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('cannot be forged by moving text between the parts', () => {
    expect(softwareId('ep', 'a b', 'c')).to.not.equal(softwareId('ep', 'a', 'b c'));
    expect(softwareId('ep,"x"', 'a', 'b')).to.not.equal(softwareId('ep', '"x",a', 'b'));
  });

  it('pair keys split back into name and version', () => {
    expect(splitPairKey(pairKey('Visual C++ 2015 (x64)', '14.36'))).to.deep.equal({ name: 'Visual C++ 2015 (x64)', version: '14.36' });
  });
});

describe('software inventory: de-duplication', () => {
  it('keeps one entry per name and version, the last occurrence winning; empty optionals are absent', () => {
    const out = dedupe([
      { name: 'A', version: '1', vendor: 'old' },
      { name: 'B', version: '1' },
      { name: 'A', version: '1', vendor: 'new', architecture: '' },
      { name: 'A', version: '2' },
    ]);
    expect(out).to.deep.equal([
      { name: 'B', version: '1' },
      { name: 'A', version: '1', vendor: 'new' },
      { name: 'A', version: '2' },
    ]);
  });
});

describe('software inventory: diff of a full report against the stored inventory', () => {
  const stored = (items: InstalledSoftware[], at: Date) =>
    items.map((i) => toInventoryDoc(owner, i, at.toISOString(), at.toISOString()));

  it('creates everything for an endpoint with no stored inventory', () => {
    const d = diffInventory(owner, [{ name: 'A', version: '1' }, { name: 'B', version: '2', vendor: 'V' }], [], T0);
    expect(d.created).to.equal(2);
    expect(d.deletes).to.deep.equal([]);
    expect(d.upserts.map((u) => [u.name, u.version, u.orgId, u.endpointId, u.firstSeen, u.lastSeen])).to.deep.equal([
      ['A', '1', 'org-1', 'ep-1', T0.toISOString(), T0.toISOString()],
      ['B', '2', 'org-1', 'ep-1', T0.toISOString(), T0.toISOString()],
    ]);
    expect(d.upserts[0].id).to.equal(softwareId('ep-1', 'A', '1'));
    expect(d.upserts[1].vendor).to.equal('V');
  });

  it('writes nothing when the same report repeats within the lastSeen window', () => {
    const items = [{ name: 'A', version: '1', vendor: 'V', installDate: '2025-05-01T00:00:00Z' }, { name: 'B', version: '2' }];
    const d = diffInventory(owner, items, stored(items, T0), new Date(T0.getTime() + HOUR));
    expect(d).to.deep.equal({ upserts: [], created: 0, deletes: [], unchanged: 2, lastSeenFloor: T0.toISOString() });
  });

  it('adds new entries, removes vanished ones, keeps firstSeen of entries present in both', () => {
    const before = stored([{ name: 'A', version: '1' }, { name: 'B', version: '1' }, { name: 'C', version: '1' }], T0);
    const now = new Date(T0.getTime() + 2 * DAY);
    const d = diffInventory(owner, [{ name: 'A', version: '1' }, { name: 'B', version: '2' }], before, now);
    expect(d.created).to.equal(1);
    expect(d.deletes.sort()).to.deep.equal([softwareId('ep-1', 'B', '1'), softwareId('ep-1', 'C', '1')].sort());
    const a = d.upserts.find((u) => u.name === 'A');
    const b2 = d.upserts.find((u) => u.name === 'B');
    // A is unchanged but its lastSeen is older than a day: rewritten with the old firstSeen.
    expect(a?.firstSeen).to.equal(T0.toISOString());
    expect(a?.lastSeen).to.equal(now.toISOString());
    expect(b2?.version).to.equal('2');
    expect(b2?.firstSeen).to.equal(now.toISOString());
  });

  it('rewrites an entry whose fields changed (keeping firstSeen), and one whose endpoint moved organization', () => {
    const before = stored([{ name: 'A', version: '1', vendor: 'V' }, { name: 'B', version: '1' }], T0);
    const now = new Date(T0.getTime() + HOUR);
    const d = diffInventory(owner, [{ name: 'A', version: '1', vendor: 'W' }, { name: 'B', version: '1' }], before, now);
    expect(d.upserts.map((u) => [u.name, u.vendor, u.firstSeen])).to.deep.equal([['A', 'W', T0.toISOString()]]);
    expect(d.unchanged).to.equal(1);
    const moved = diffInventory({ id: 'ep-1', orgId: 'org-2' }, [{ name: 'B', version: '1' }], before, now);
    expect(moved.upserts.map((u) => [u.name, u.orgId, u.firstSeen])).to.deep.equal([['B', 'org-2', T0.toISOString()]]);
  });

  it('treats a vendor removed from the report as a change', () => {
    const before = stored([{ name: 'A', version: '1', vendor: 'V' }], T0);
    const d = diffInventory(owner, [{ name: 'A', version: '1' }], before, new Date(T0.getTime() + HOUR));
    expect(d.upserts).to.have.length(1);
    expect(d.upserts[0]).to.not.have.property('vendor');
  });

  it('finds a stored entry by its pair key, and one stored without the key by its id', () => {
    const keyed = stored([{ name: 'A', version: '1' }], T0);
    const unkeyed = stored([{ name: 'B', version: '1' }], T0).map(({ nameVersion: _key, ...rest }) => rest);
    const now = new Date(T0.getTime() + HOUR);
    const d = diffInventory(owner, [{ name: 'A', version: '1' }, { name: 'B', version: '1' }], [...keyed, ...unkeyed], now);
    expect(d).to.deep.equal({ upserts: [], created: 0, deletes: [], unchanged: 2, lastSeenFloor: T0.toISOString() });
    const changed = diffInventory(owner, [{ name: 'A', version: '1', vendor: 'V' }, { name: 'B', version: '1', vendor: 'V' }], [...keyed, ...unkeyed], now);
    expect(changed.created).to.equal(0);
    expect(changed.upserts.map((u) => [u.id, u.firstSeen, u.lastSeen])).to.deep.equal([
      [softwareId('ep-1', 'A', '1'), T0.toISOString(), now.toISOString()],
      [softwareId('ep-1', 'B', '1'), T0.toISOString(), now.toISOString()],
    ]);
  });

  it('counts duplicates in one report once', () => {
    const d = diffInventory(owner, [{ name: 'A', version: '1' }, { name: 'A', version: '1' }, { name: 'A', version: '1' }], [], T0);
    expect(d.created).to.equal(1);
    expect(d.upserts).to.have.length(1);
  });

  it('empties the inventory for an empty report', () => {
    const before = stored([{ name: 'A', version: '1' }, { name: 'B', version: '1' }], T0);
    const d = diffInventory(owner, [], before, T0);
    expect(d.deletes).to.have.length(2);
    expect(d.upserts).to.have.length(0);
  });

  it('normalizes installDate so an equal date in another spelling is not a change', () => {
    const before = stored([{ name: 'A', version: '1', installDate: '2025-05-01' }], T0);
    expect(before[0].installDate).to.equal('2025-05-01T00:00:00.000Z');
    const d = diffInventory(owner, [{ name: 'A', version: '1', installDate: '2025-05-01T00:00:00Z' }], before, T0);
    expect(d.unchanged).to.equal(1);
  });
});

describe('software inventory: the report digest', () => {
  const report: InstalledSoftware[] = [
    { name: 'Firefox', version: '120.0', vendor: 'Mozilla' },
    { name: 'Zoom', version: '5.17', architecture: 'x64', installDate: '2025-03-01T00:00:00.000Z' },
    { name: 'Firefox', version: '121.0' },
  ];
  const digest = reportDigest('org-1', dedupe(report));

  it('is the same for the same entries in any order, repeats counted once', () => {
    expect(reportDigest('org-1', dedupe([...report].reverse()))).to.equal(digest);
    expect(reportDigest('org-1', dedupe([...report, report[0]]))).to.equal(digest);
    expect(digest).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('differs when any field of any entry differs, or the organization does', () => {
    const variants: InstalledSoftware[][] = [
      [{ ...report[0], vendor: 'Mozilla Foundation' }, report[1], report[2]],
      [{ ...report[0], architecture: 'x64' }, report[1], report[2]],
      [report[0], { ...report[1], installDate: '2025-03-02T00:00:00.000Z' }, report[2]],
      [report[0], report[1], { ...report[2], version: '121.1' }],
      [report[0], report[1]],
      [...report, { name: 'Slack', version: '4.36' }],
    ];
    for (const v of variants) expect(reportDigest('org-1', dedupe(v)), JSON.stringify(v)).to.not.equal(digest);
    expect(reportDigest('org-2', dedupe(report))).to.not.equal(digest);
  });

  it('cannot be matched by moving text between the fields of an entry', () => {
    expect(reportDigest('o', [{ name: 'a', version: 'b', vendor: 'c' }])).to.not.equal(reportDigest('o', [{ name: 'a', version: 'b', architecture: 'c' }]));
    expect(reportDigest('o', [{ name: 'a b', version: 'c' }])).to.not.equal(reportDigest('o', [{ name: 'a', version: 'b c' }]));
  });
});

describe('software inventory: the oldest lastSeen a diff leaves', () => {
  it("is the oldest unchanged entry's lastSeen, or now when every entry is written", () => {
    const stored = [
      toInventoryDoc(owner, { name: 'A', version: '1' }, new Date(T0.getTime() - 3 * HOUR).toISOString(), new Date(T0.getTime() - 3 * HOUR).toISOString()),
      toInventoryDoc(owner, { name: 'B', version: '1' }, new Date(T0.getTime() - 5 * HOUR).toISOString(), new Date(T0.getTime() - 5 * HOUR).toISOString()),
      toInventoryDoc(owner, { name: 'C', version: '1' }, new Date(T0.getTime() - 2 * DAY).toISOString(), new Date(T0.getTime() - 2 * DAY).toISOString()),
    ];
    const same = diffInventory(owner, [{ name: 'A', version: '1' }, { name: 'B', version: '1' }, { name: 'C', version: '1' }], stored, T0);
    // C is past the window and rewritten now; B is the oldest left as it was.
    expect(same.upserts.map((d) => d.name)).to.deep.equal(['C']);
    expect(same.lastSeenFloor).to.equal(stored[1].lastSeen);
    const moved = diffInventory(owner, [{ name: 'A', version: '2' }], stored, T0);
    expect(moved.lastSeenFloor).to.equal(T0.toISOString());
  });
});
