import { expect } from 'chai';
import { expectErrorBody, type TestApp, sharedApp } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';

interface Bucket {
  key: string;
  count: number;
}

describe('host-info aggregation report (spec 4.9)', () => {
  let t: TestApp;
  let root: string;
  let child: string;
  let other: string;
  let readerRoot: Api;
  let readerChild: Api;
  let adminOther: Api;

  const host = (os: string, platform: string, kernelArch: string, extra: Record<string, string> = {}): Record<string, unknown> => ({
    hostInfo: { os, platform, platformFamily: platform === 'ubuntu' ? 'debian' : platform, kernelArch, ...extra },
  });

  before(async () => {
    t = await sharedApp();
    root = await t.world.org();
    child = await t.world.org(root);
    other = await t.world.org();
    readerRoot = t.world.as(await t.world.token('reader', root));
    readerChild = t.world.as(await t.world.token('reader', child));
    adminOther = t.world.as(await t.world.token('admin', other));
    // root: 2 linux/ubuntu, 1 windows; child: 1 linux/ubuntu, 1 windows, 1 darwin, 1 deleted windows; other: 3 plan9.
    await t.world.endpoint(root, host('linux', 'ubuntu', 'x86_64', { virtualizationSystem: 'kvm', virtualizationRole: 'guest' }));
    await t.world.endpoint(root, host('linux', 'ubuntu', 'aarch64', { kernelVersion: '6.8.0' }));
    await t.world.endpoint(root, host('windows', 'Microsoft Windows 11 Pro', 'x86_64', { platformVersion: '10.0.22631' }));
    await t.world.endpoint(child, host('linux', 'ubuntu', 'x86_64', { kernelVersion: '6.8.0' }));
    await t.world.endpoint(child, host('windows', 'Microsoft Windows 11 Pro', 'x86_64', { platformVersion: '10.0.22631' }));
    await t.world.endpoint(child, host('darwin', 'darwin', 'arm64', { virtualizationSystem: 'kvm', virtualizationRole: 'host' }));
    const deleted = await t.world.endpoint(child, host('windows', 'Microsoft Windows Server 2022', 'x86_64'));
    expect((await t.admin.delete(`/endpoint/${deleted.id}`)).status).to.equal(204);
    for (let i = 0; i < 3; i++) await t.world.endpoint(other, host('plan9', 'plan9', 'mips'));
  });

  async function report(as: Api, body: unknown): Promise<Bucket[]> {
    const res = await as.post<Bucket[]>('/report/host-info/aggregation', body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  it('counts every value of the column over the named orgs, count descending then key; deleted excluded', async () => {
    expect(await report(readerRoot, { orgIds: [root, child], column: 'os' })).to.deep.equal([
      { key: 'linux', count: 3 },
      { key: 'windows', count: 2 },
      { key: 'darwin', count: 1 },
    ]);
    expect(await report(readerRoot, { orgIds: [root, child], column: 'platform' })).to.deep.equal([
      { key: 'ubuntu', count: 3 },
      { key: 'Microsoft Windows 11 Pro', count: 2 },
      { key: 'darwin', count: 1 },
    ]);
  });

  it('named orgs count exactly themselves (not their children)', async () => {
    expect(await report(readerRoot, { orgIds: [root], column: 'os' })).to.deep.equal([
      { key: 'linux', count: 2 },
      { key: 'windows', count: 1 },
    ]);
  });

  it('every hostInfo column can be aggregated; endpoints without the value are in no bucket', async () => {
    const orgIds = [root, child];
    expect(await report(readerRoot, { orgIds, column: 'platformFamily' })).to.deep.equal([
      { key: 'debian', count: 3 },
      { key: 'Microsoft Windows 11 Pro', count: 2 },
      { key: 'darwin', count: 1 },
    ]);
    expect(await report(readerRoot, { orgIds, column: 'platformVersion' })).to.deep.equal([{ key: '10.0.22631', count: 2 }]);
    expect(await report(readerRoot, { orgIds, column: 'kernelVersion' })).to.deep.equal([{ key: '6.8.0', count: 2 }]);
    expect(await report(readerRoot, { orgIds, column: 'kernelArch' })).to.deep.equal([
      { key: 'x86_64', count: 4 },
      { key: 'aarch64', count: 1 },
      { key: 'arm64', count: 1 },
    ]);
    expect(await report(readerRoot, { orgIds, column: 'virtualizationSystem' })).to.deep.equal([{ key: 'kvm', count: 2 }]);
    expect(await report(readerRoot, { orgIds, column: 'virtualizationRole' })).to.deep.equal([
      { key: 'guest', count: 1 },
      { key: 'host', count: 1 },
    ]);
  });

  it("empty or absent orgIds mean the caller's subtree", async () => {
    const expected = [
      { key: 'linux', count: 3 },
      { key: 'windows', count: 2 },
      { key: 'darwin', count: 1 },
    ];
    expect(await report(readerRoot, { orgIds: [], column: 'os' })).to.deep.equal(expected);
    expect(await report(readerRoot, { column: 'os' })).to.deep.equal(expected);
    expect(await report(readerChild, { orgIds: [], column: 'os' })).to.deep.equal([
      { key: 'darwin', count: 1 },
      { key: 'linux', count: 1 },
      { key: 'windows', count: 1 },
    ]);
    expect(await report(adminOther, { column: 'os' })).to.deep.equal([{ key: 'plan9', count: 3 }]);
  });

  it('any other column is 400; an org outside the subtree is 403; no token is 401', async () => {
    for (const column of ['hostName', 'hostid', 'uptime', 'orgId', '', undefined]) {
      expectErrorBody(await t.admin.post('/report/host-info/aggregation', { orgIds: [root], column }), 400, `${P}/report/host-info/aggregation`);
    }
    expectErrorBody(await t.admin.post('/report/host-info/aggregation', { orgIds: 'x', column: 'os' }), 400);
    expectErrorBody(await readerChild.post('/report/host-info/aggregation', { orgIds: [root], column: 'os' }), 403);
    expectErrorBody(await readerRoot.post('/report/host-info/aggregation', { orgIds: [root, other], column: 'os' }), 403);
    expectErrorBody(await t.anon.post('/report/host-info/aggregation', { column: 'os' }), 401);
  });
});
