import { expect } from 'chai';
import {
  foldSightings,
  mergeSighting,
  networkHostId,
  parseMac,
  sightingId,
  type NetworkHost,
} from '../../src/resources/network/model.js';
import { byCountThenKey } from '../../src/store/aggregations.js';

describe('network host rules', () => {
  it('normalises MAC addresses and refuses non-MACs', () => {
    expect(parseMac('AA-BB-CC-DD-EE-0F')).to.equal('aa:bb:cc:dd:ee:0f');
    expect(parseMac('aabb.ccdd.ee0f')).to.equal('aa:bb:cc:dd:ee:0f');
    expect(parseMac('aa:bb:cc:dd:ee')).to.equal(undefined);
    expect(parseMac('zz:bb:cc:dd:ee:ff')).to.equal(undefined);
    expect(parseMac(undefined)).to.equal(undefined);
  });

  it('ids are deterministic per org and MAC, else per org and IP', () => {
    const byMac = networkHostId('o1', 'aa:bb:cc:dd:ee:ff', '10.0.0.1');
    expect(networkHostId('o1', 'aa:bb:cc:dd:ee:ff', '10.0.0.2')).to.equal(byMac);
    expect(networkHostId('o2', 'aa:bb:cc:dd:ee:ff', '10.0.0.1')).to.not.equal(byMac);
    const byIp = networkHostId('o1', undefined, '10.0.0.1');
    expect(byIp).to.not.equal(byMac);
    expect(networkHostId('o1', undefined, '10.0.0.1')).to.equal(byIp);
    expect(byIp).to.match(/^[0-9a-f]{32}$/);
  });

  it('a new host starts NONE', () => {
    const { host, changed } = mergeSighting(undefined, { orgId: 'o', ipAddress: '10.0.0.1', lastSeen: '2024-01-01T00:00:00.000Z' }, 'h');
    expect(changed).to.equal(true);
    expect(host).to.deep.equal({ id: 'h', orgId: 'o', ipAddress: '10.0.0.1', lastSeen: '2024-01-01T00:00:00.000Z', status: 'NONE' });
  });

  it('a known host keeps its status; lastSeen and the address move forward only', () => {
    const known: NetworkHost = {
      id: 'h',
      orgId: 'o',
      ipAddress: '10.0.0.1',
      macAddress: 'aa:bb:cc:dd:ee:ff',
      lastSeen: '2024-01-02T00:00:00.000Z',
      status: 'KNOWN',
    };
    const newer = mergeSighting(known, { orgId: 'o', ipAddress: '10.0.0.9', lastSeen: '2024-01-03T00:00:00.000Z' }, 'h');
    expect(newer.changed).to.equal(true);
    expect(newer.host).to.include({ status: 'KNOWN', ipAddress: '10.0.0.9', lastSeen: '2024-01-03T00:00:00.000Z' });
    const older = mergeSighting(known, { orgId: 'o', ipAddress: '10.0.0.7', lastSeen: '2024-01-01T00:00:00.000Z' }, 'h');
    expect(older.changed).to.equal(false);
    expect(older.host).to.deep.equal(known);
    const same = mergeSighting(known, { orgId: 'o', ipAddress: '10.0.0.1', lastSeen: known.lastSeen }, 'h');
    expect(same.changed).to.equal(false);
    const vendorOnly = mergeSighting(known, { orgId: 'o', ipAddress: '10.0.0.7', macVendor: 'Acme', lastSeen: '2024-01-01T00:00:00.000Z' }, 'h');
    expect(vendorOnly.changed).to.equal(true);
    expect(vendorOnly.host).to.include({ macVendor: 'Acme', ipAddress: '10.0.0.1', lastSeen: known.lastSeen });
  });

  it('folds sightings of one host in a batch: the latest wins, a vendor from any is kept', () => {
    const a = { orgId: 'o', ipAddress: '10.0.0.1', macAddress: 'aa:bb:cc:dd:ee:ff', macVendor: 'Acme', lastSeen: '2024-01-01T00:00:00.000Z' };
    const b = { orgId: 'o', ipAddress: '10.0.0.2', macAddress: 'aa:bb:cc:dd:ee:ff', lastSeen: '2024-01-05T00:00:00.000Z' };
    const c = { orgId: 'o', ipAddress: '10.0.0.3', lastSeen: '2024-01-02T00:00:00.000Z' };
    const folded = foldSightings([a, b, c]);
    expect(folded.size).to.equal(2);
    expect(folded.get(sightingId(a))).to.deep.equal({ ...b, macVendor: 'Acme' });
    expect(folded.get(sightingId(c))).to.deep.equal(c);
  });
});

describe('host-info report buckets', () => {
  it('sort by count descending, then key ascending', () => {
    const sorted = [
      { key: 'b', count: 2 },
      { key: 'c', count: 5 },
      { key: 'a', count: 2 },
      { key: 'd', count: 1 },
    ].sort(byCountThenKey);
    expect(sorted.map((b) => b.key)).to.deep.equal(['c', 'a', 'b', 'd']);
  });
});
