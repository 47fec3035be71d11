/**
 * Deep paging and export: cursors continue every page search past the 10,000-result
 * window on a point in time, and every page search exports as NDJSON or CSV, streamed, inside
 * the caller's subtree. Over 10,000 agents are seeded through the store's bulk path.
 */
import http from 'node:http';
import { expect } from 'chai';
import { Client } from '@elastic/elasticsearch';
import { startTestApp, expectErrorBody, RUN_PREFIX, uid, type TestApp } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { waitFor } from '../helpers/wait.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';
import { bulkEndpoints, refreshIndex } from '../helpers/endpoint-store.js';

interface Page<T = Record<string, unknown>> {
  pageRequest: { page: number; size: number; sort?: unknown[] };
  totalCount: number;
  totalPages: number;
  items: T[];
  nextCursor?: string;
}

/** Agents of tenant A's root, of its child org, and of tenant B: A's subtree alone passes 10,000. */
const A_ROOT = 9_800;
const A_CHILD = 700;
const B_AGENTS = 600;
/** Display names a spreadsheet would run or a naive CSV writer would break. */
const NASTY = ['=1+2', '+SUM(A1)', '-2+3', '@cmd', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', '\tlead'];

/** RFC 4180 reader for the test (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error('CSV does not end with CRLF');
  return rows;
}

async function exportOf(
  api: Api,
  path: string,
  body: unknown,
  accept = 'application/x-ndjson',
): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${api.base}${P}${path}/export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...(api.token ? { 'x-auth-token': api.token } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** JSON with sorted keys: equal for records equal whatever their key order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );
}

function ndjsonLines(text: string): Record<string, unknown>[] {
  expect(text === '' || text.endsWith('\n')).to.equal(true);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every page of a cursor, from `cursor=start` to the page without nextCursor. */
async function followCursor(api: Api, path: string, body: Record<string, unknown>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor = 'start';
  for (let guard = 0; guard < 1000; guard++) {
    const res = await api.post<Page>(`${path}?cursor=${encodeURIComponent(cursor)}`, body);
    expect(res.status, res.text).to.equal(200);
    pages.push(res.body);
    if (res.body.nextCursor === undefined) return pages;
    cursor = res.body.nextCursor;
  }
  throw new Error('cursor never ended');
}

/** Every page the spec's paging gives (page 0, 1, … while inside the window). */
async function plainPages(
  api: Api,
  path: string,
  body: Record<string, unknown>,
  size: number,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let page = 0; ; page++) {
    const res = await api.post<Page>(path, { ...body, pageRequest: { ...(body.pageRequest as object), page, size } });
    expect(res.status, res.text).to.equal(200);
    out.push(...res.body.items);
    if (res.body.items.length < size) return out;
  }
}

const payloadOf = (cursor: string): { pit: string } =>
  JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as { pit: string };

describe('Deep paging and export', function () {
  this.timeout(600_000);
  let t: TestApp;
  let es: Client;
  let orgA: string;
  let childA: string;
  let orgB: string;
  let readerA: Api;
  let adminB: Api;
  const idsA = new Set<string>();
  const idsChildA = new Set<string>();
  const idsB = new Set<string>();
  const endpointsIndex = `${RUN_PREFIX}-endpoints`;

  const searchStats = async (): Promise<{ open: number; queries: number }> => {
    const s = await es.indices.stats({ index: endpointsIndex, metric: 'search' });
    return { open: s._all.total?.search?.open_contexts ?? 0, queries: s._all.total?.search?.query_total ?? 0 };
  };

  before(async () => {
    t = await startTestApp();
    es = new Client({ node: (await testElasticsearch()).url });
    orgA = await t.world.org();
    childA = await t.world.org(orgA);
    orgB = await t.world.org();
    readerA = t.world.as(await t.world.token('reader', orgA));
    adminB = t.world.as(await t.world.token('admin', orgB));

    const now = new Date().toISOString();
    const by = { username: 'deep-paging-seed', authenticator: 'none' };
    const docs: EndpointDoc[] = [];
    const add = (orgId: string, n: number, tag: string, ids: Set<string>): void => {
      for (let i = 0; i < n; i++) {
        const id = `${tag}-${i}-${uid('e')}`;
        ids.add(id);
        docs.push({
          id,
          orgId,
          type: 'VC_ENDPOINT',
          createdAt: now,
          updatedAt: now,
          createdBy: by,
          updatedBy: by,
          deleted: false,
          connectionStatus: i % 2 === 0 ? 'CONNECTED' : 'DISCONNECTED',
          displayName: i < NASTY.length ? NASTY[i] : `${tag} agent ${i}`,
          // 500 distinct host names: the sort needs its id tiebreaker to be a total order.
          hostInfo: { hostName: `host-${String(i % 500).padStart(3, '0')}` },
          internalIps: [`10.0.${(i >> 8) & 255}.${i & 255}`],
        });
      }
    };
    add(orgA, A_ROOT, 'a', idsA);
    add(childA, A_CHILD, 'c', idsChildA);
    for (const id of idsChildA) idsA.add(id);
    add(orgB, B_AGENTS, 'b', idsB);
    for (let i = 0; i < docs.length; i += 5000) {
      const res = await bulkEndpoints(
        t.server.store,
        docs.slice(i, i + 5000).flatMap((d) => [{ index: { _id: d.id } }, d]),
        { refresh: false },
      );
      expect(res.errors, JSON.stringify(res.items.find((it) => it.index?.error))).to.equal(false);
    }
    await refreshIndex(t.server.store, 'endpoints');
  });
  after(async () => {
    await es.close();
    await t.close();
  });

  const byHostDesc = {
    criteria: {},
    pageRequest: { page: 0, size: 1000, sort: [{ field: 'hostInfo.hostName', direction: 'DESC' }] },
  };

  it('a cursor continues /endpoint/page-search past 10,000: every record once, no gaps, the same total and sort on every page', async () => {
    // The spec's paging still stops at the window.
    expectErrorBody(
      await readerA.post('/endpoint/page-search', {
        ...byHostDesc,
        pageRequest: { ...byHostDesc.pageRequest, page: 10 },
      }),
      400,
    );

    const pages = await followCursor(readerA, '/endpoint/page-search', byHostDesc);
    const items = pages.flatMap((p) => p.items) as { id: string; orgId: string; hostInfo: { hostName: string } }[];
    expect(idsA.size).to.be.greaterThan(10_000);
    expect(items).to.have.length(idsA.size);
    expect(new Set(items.map((i) => i.id))).to.deep.equal(idsA);
    pages.forEach((p, n) => {
      expect(p.totalCount).to.equal(idsA.size);
      expect(p.totalPages).to.equal(Math.ceil(idsA.size / 1000));
      expect(p.pageRequest.page).to.equal(n);
      expect(p.pageRequest.sort).to.deep.equal(byHostDesc.pageRequest.sort);
    });
    expect(pages).to.have.length(Math.ceil(idsA.size / 1000));
    // Host name descending, ties by id ascending, across page boundaries too.
    for (let i = 1; i < items.length; i++) {
      const [a, b] = [items[i - 1], items[i]];
      const ordered =
        a.hostInfo.hostName > b.hostInfo.hostName || (a.hostInfo.hostName === b.hostInfo.hostName && a.id < b.id);
      expect(ordered, `${a.hostInfo.hostName}/${a.id} before ${b.hostInfo.hostName}/${b.id}`).to.equal(true);
    }
    // The cursor's first page is the spec's first page.
    const plain = await readerA.post<Page>('/endpoint/page-search', byHostDesc);
    expect(plain.body.items.map((i) => i.id)).to.deep.equal(pages[0].items.map((i) => i.id));
    expect(plain.body).to.not.have.property('nextCursor');
    // The last page closed its point in time.
    expect((await waitFor(searchStats, (s) => s.open === 0, 20_000)).met).to.equal(true);
  });

  it('a cursor is bound to its token and request, and never widens the subtree', async () => {
    const first = await readerA.post<Page>('/endpoint/page-search?cursor=start', byHostDesc);
    expect(first.status).to.equal(200);
    const cursor = first.body.nextCursor as string;
    expect(cursor).to.be.a('string');
    const path = `${P}/endpoint/page-search`;
    // Another tenant's token, the same cursor: refused, nothing of A's.
    expectErrorBody(await adminB.post(`/endpoint/page-search?cursor=${cursor}`, byHostDesc), 400, path);
    // The same token with other criteria (another org, another sort or size): refused.
    expectErrorBody(
      await readerA.post(`/endpoint/page-search?cursor=${cursor}`, { ...byHostDesc, criteria: { orgId: orgB } }),
      400,
      path,
    );
    expectErrorBody(
      await readerA.post(`/endpoint/page-search?cursor=${cursor}`, {
        ...byHostDesc,
        pageRequest: { page: 0, size: 999 },
      }),
      400,
      path,
    );
    // A cursor re-signed by nobody: its payload edited (another page, a widened anything) fails the signature.
    const [payload, sig] = cursor.split('.');
    const edited = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), tok: 'x' }),
    ).toString('base64url');
    expectErrorBody(await readerA.post(`/endpoint/page-search?cursor=${edited}.${sig}`, byHostDesc), 400, path);
    // Tenant B's own cursor over every org sees only B's agents.
    const pagesB = await followCursor(adminB, '/endpoint/page-search', { criteria: {}, pageRequest: { size: 250 } });
    const seenB = pagesB.flatMap((p) => p.items.map((i) => i.id as string));
    expect(new Set(seenB)).to.deep.equal(idsB);
    expect(pagesB.every((p) => p.totalCount === B_AGENTS)).to.equal(true);
    // A cursor on another org's criteria is a 403, as the page search is.
    expectErrorBody(
      await adminB.post('/endpoint/page-search?cursor=start', { criteria: { orgId: orgA }, pageRequest: {} }),
      403,
    );
    await es.closePointInTime({ id: payloadOf(cursor).pit });
  });

  it('an expired or garbage cursor answers 400 with the spec error body', async () => {
    const first = await readerA.post<Page>('/endpoint/page-search?cursor=start', byHostDesc);
    const cursor = first.body.nextCursor as string;
    // The point in time goes away (as at the end of its keep-alive).
    await es.closePointInTime({ id: payloadOf(cursor).pit });
    const expired = await readerA.post<{ message: string }>(`/endpoint/page-search?cursor=${cursor}`, byHostDesc);
    expectErrorBody(expired, 400, `${P}/endpoint/page-search`);
    expect(expired.body.message).to.match(/cursor expired/);
    for (const garbage of ['garbage', 'a.b', `${cursor}x`, '..', 'start.start']) {
      const res = await readerA.post<{ message: string }>(
        `/endpoint/page-search?cursor=${encodeURIComponent(garbage)}`,
        byHostDesc,
      );
      expectErrorBody(res, 400);
      expect(res.body.message).to.match(/cursor is not valid/);
    }
    // A cursor may start on any page inside the window, not beyond it.
    expectErrorBody(
      await readerA.post('/endpoint/page-search?cursor=start', {
        ...byHostDesc,
        pageRequest: { ...byHostDesc.pageRequest, page: 10 },
      }),
      400,
    );
    const third = await readerA.post<Page>('/endpoint/page-search?cursor=start', {
      ...byHostDesc,
      pageRequest: { ...byHostDesc.pageRequest, page: 2 },
    });
    expect(third.body.pageRequest.page).to.equal(2);
    const fourth = await readerA.post<Page>(`/endpoint/page-search?cursor=${third.body.nextCursor}`, byHostDesc);
    expect(fourth.body.pageRequest.page).to.equal(3);
    const plainFourth = await readerA.post<Page>('/endpoint/page-search', {
      ...byHostDesc,
      pageRequest: { ...byHostDesc.pageRequest, page: 3 },
    });
    expect(fourth.body.items.map((i) => i.id)).to.deep.equal(plainFourth.body.items.map((i) => i.id));
    await es.closePointInTime({ id: payloadOf(fourth.body.nextCursor as string).pit });
  });

  it("NDJSON export: exactly the caller's matching records, in the search's order, as the pages show them", async () => {
    const all = await exportOf(readerA, '/endpoint/page-search', byHostDesc);
    expect(all.status, all.text.slice(0, 300)).to.equal(200);
    expect(all.type).to.match(/^application\/x-ndjson/);
    const lines = ndjsonLines(all.text);
    expect(lines).to.have.length(idsA.size);
    expect(new Set(lines.map((l) => l.id))).to.deep.equal(idsA);
    const firstPage = await readerA.post<Page>('/endpoint/page-search', byHostDesc);
    expect(lines.slice(0, 1000)).to.deep.equal(firstPage.body.items);

    const child = ndjsonLines((await exportOf(readerA, '/endpoint/page-search', { criteria: { orgId: childA } })).text);
    expect(new Set(child.map((l) => l.id))).to.deep.equal(idsChildA);
    const own = ndjsonLines((await exportOf(adminB, '/endpoint/page-search', {})).text);
    expect(new Set(own.map((l) => l.id))).to.deep.equal(idsB);
    // Another tenant's org in the criteria: 403 with the spec body, before any byte of data.
    const foreign = await exportOf(adminB, '/endpoint/page-search', { criteria: { orgId: orgA } });
    expect(foreign.status).to.equal(403);
    expect(JSON.parse(foreign.text)).to.include({ status: 403, path: `${P}/endpoint/page-search/export` });
    expect((await exportOf(readerA, '/endpoint/page-search', {}, 'image/png')).status).to.equal(406);
    expect((await waitFor(searchStats, (s) => s.open === 0, 20_000)).met).to.equal(true);
  });

  it('CSV export: a header row, RFC 4180 quoting, no spreadsheet formulas, exactly the matching records', async () => {
    const res = await exportOf(
      adminB,
      '/endpoint/page-search',
      { criteria: {}, pageRequest: { sort: [{ field: 'displayName', direction: 'ASC' }] } },
      'text/csv',
    );
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    expect(res.type).to.match(/^text\/csv/);
    const rows = parseCsv(res.text);
    const header = rows[0];
    expect(header).to.include.members(['id', 'orgId', 'displayName', 'connectionStatus', 'hostInfo', 'internalIps']);
    const records = rows.slice(1).map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
    expect(records).to.have.length(B_AGENTS);
    expect(rows.every((r) => r.length === header.length)).to.equal(true);
    expect(new Set(records.map((r) => r.id))).to.deep.equal(idsB);
    expect(records.every((r) => r.orgId === orgB)).to.equal(true);
    const names = new Set(records.map((r) => r.displayName));
    for (const formula of ['=1+2', '+SUM(A1)', '-2+3', '@cmd', '\tlead']) expect(names).to.include(`'${formula}`);
    for (const text of ['a,b', 'say "hi"', 'two\nlines', 'cr\rhere']) expect(names).to.include(text);
    expect([...names].some((n) => /^[=+\-@\t]/.test(n))).to.equal(false);
    // Nested values are JSON in their cell.
    expect(JSON.parse(records[0].hostInfo)).to.have.property('hostName');
  });

  it('a client that goes away stops the export and closes its point in time', async () => {
    const before = await searchStats();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${t.url}${P}/endpoint/page-search/export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': readerA.token as string },
      });
      req.on('response', (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve() : reject(err)));
      req.end(JSON.stringify({ criteria: {} }));
    });
    const closed = await waitFor(searchStats, (s) => s.open <= before.open, 20_000);
    expect(closed.met, JSON.stringify(closed.value)).to.equal(true);
    // The scan stopped: far fewer batches than a full export of A's subtree (11 of 1,000).
    expect(closed.value.queries - before.queries).to.be.lessThan(Math.ceil(idsA.size / 1000));
  });

  it('an export holds a heavy slot only while it reads a batch: a stalled download does not block the heavy lane', async () => {
    // One heavy slot, a queue of up to 2 s: were the slot held for the whole stream, the count below would be shed.
    const laned = await startTestApp({
      ECS_ADMISSION: 'true',
      ECS_LANE_LIMITS: 'heavy=1',
      ECS_LANE_QUEUE_MS: 'heavy=2000',
    });
    try {
      const reader = laned.world.as(readerA.token);
      const before = await searchStats();
      // A client that takes the response headers and then reads nothing: the server stalls on backpressure.
      const stalled = await new Promise<{ req: http.ClientRequest; res: http.IncomingMessage }>((resolve, reject) => {
        const req = http.request(`${laned.url}${P}/endpoint/page-search/export`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-auth-token': readerA.token as string },
        });
        req.on('response', (res) => {
          res.pause();
          resolve({ req, res });
        });
        req.on('error', reject);
        req.end(JSON.stringify({ criteria: {} }));
      });
      expect(stalled.res.statusCode).to.equal(200);
      expect((await waitFor(searchStats, (st) => st.open > before.open, 10_000)).met).to.equal(true);
      const count = await reader.post('/utm-endpoint/count', {});
      expect(count.status, count.text).to.equal(200);
      const second = ndjsonLines((await exportOf(laned.world.as(adminB.token), '/endpoint/page-search', {})).text);
      expect(new Set(second.map((l) => l.id))).to.deep.equal(idsB);
      // The stalled export was still open all along (its point in time is still held).
      expect((await searchStats()).open).to.be.greaterThan(before.open);
      stalled.req.destroy();
      expect((await waitFor(searchStats, (st) => st.open <= before.open, 20_000)).met).to.equal(true);
    } finally {
      await laned.close();
    }
  });

  describe('every page search gets a cursor and an export by declaration', () => {
    const searches: { name: string; path: () => string; body: () => Record<string, unknown>; size: number }[] = [];
    let agentB: string;

    before(async () => {
      agentB = [...idsB][0];
      const now = new Date().toISOString();
      const by = { username: 'deep-paging-seed', authenticator: 'none' };
      const devices: EndpointDoc[] = [];
      for (let i = 0; i < 23; i++) {
        const base = { orgId: orgB, createdAt: now, updatedAt: now, createdBy: by, updatedBy: by, deleted: false };
        devices.push({
          ...base,
          id: uid('utm'),
          type: 'EXTERNAL_UTM',
          serialId: uid('SN'),
          model: `M${i % 4}`,
          site: { id: `s${i % 3}` },
        });
        devices.push({
          ...base,
          id: uid('lte'),
          type: 'VC_LTE',
          imei: `35${String(i).padStart(13, '0')}`,
          dataUsage: i,
          site: { id: `s${i % 3}` },
        });
      }
      const res = await bulkEndpoints(t.server.store, devices.flatMap((d) => [{ index: { _id: d.id } }, d]));
      expect(res.errors).to.equal(false);
      const hosts = Array.from({ length: 23 }, (_, i) => ({
        orgId: orgB,
        ipAddress: `10.9.0.${i + 1}`,
        lastSeen: '2026-01-01T00:00:00Z',
      }));
      expect((await adminB.post('/network-host/discovered', hosts)).status).to.equal(200);
      for (const org of [orgB, ...(await Promise.all([1, 2, 3].map(() => t.world.org(orgB))))]) {
        for (const type of ['ATC', 'BDHL', 'DCI'])
          expect((await adminB.post('/org-license-contract', { orgId: org, type })).status).to.equal(200);
      }
      const software = Array.from({ length: 23 }, (_, i) => ({ name: `pkg-${i % 9}`, version: `1.${i}`, vendor: 'v' }));
      expect((await adminB.post(`/endpoint/${agentB}/software-inventory`, software)).status).to.equal(201);
      const second = [...idsB][1];
      expect((await adminB.post(`/endpoint/${second}/software-inventory`, software.slice(0, 11))).status).to.equal(201);
      // A report stamps its endpoint's lastSeen (acknowledged, not yet searchable): the pages and
      // the exports below must read the same records.
      await refreshIndex(t.server.store, 'endpoints');
      searches.push(
        { name: 'agents', path: () => '/endpoint/page-search', body: () => ({ criteria: { orgId: orgB } }), size: 97 },
        {
          name: 'UTM',
          path: () => '/utm-endpoint/searchPage',
          body: () => ({ criteria: {}, pageRequest: { sort: [{ field: 'model', direction: 'DESC' }] } }),
          size: 5,
        },
        { name: 'LTE', path: () => '/lte-endpoint/search', body: () => ({ criteria: {} }), size: 4 },
        { name: 'network hosts', path: () => '/network-host/search-page', body: () => ({ criteria: {} }), size: 5 },
        {
          name: 'license contracts',
          path: () => '/org-license-contract/searchPage',
          body: () => ({ criteria: {} }),
          size: 5,
        },
        {
          name: 'software summary',
          path: () => `/org/${orgB}/software-inventory-summary/search-page`,
          body: () => ({ criteria: {} }),
          size: 4,
        },
        {
          name: 'endpoint software',
          path: () => `/endpoint/${agentB}/software-inventory/search-page`,
          body: () => ({ criteria: {} }),
          size: 5,
        },
      );
    });

    it("cursor pages and the export equal the spec's pages, for each of the seven page searches", async () => {
      expect(searches).to.have.length(7);
      for (const s of searches) {
        const plain = await plainPages(adminB, s.path(), s.body(), s.size);
        expect(plain.length, s.name).to.be.greaterThan(s.size);
        const pages = await followCursor(adminB, s.path(), {
          ...s.body(),
          pageRequest: { ...(s.body().pageRequest as object), size: s.size },
        });
        expect(
          pages.flatMap((p) => p.items),
          s.name,
        ).to.deep.equal(plain);
        expect(
          pages.every((p) => p.totalCount === plain.length),
          s.name,
        ).to.equal(true);
        const exported = await exportOf(adminB, s.path(), s.body());
        expect(exported.status, `${s.name}: ${exported.text.slice(0, 200)}`).to.equal(200);
        const lines = ndjsonLines(exported.text);
        const differs = lines.findIndex((l, i) => canonical(l) !== canonical(plain[i]));
        expect(
          { count: lines.length, firstDifference: differs < 0 ? undefined : { at: differs, exported: lines[differs], page: plain[differs] } },
          s.name,
        ).to.deep.equal({ count: plain.length, firstDifference: undefined });
        expect(lines, s.name).to.deep.equal(plain);
        const csv = parseCsv((await exportOf(adminB, s.path(), s.body(), 'text/csv')).text);
        expect(csv.length - 1, s.name).to.equal(plain.length);
      }
      expect((await waitFor(searchStats, (st) => st.open === 0, 20_000)).met).to.equal(true);
    });

    it('the exports are extensions in the heavy lane, and the cursor is declared on each page search', () => {
      const routes = t.server.handle.routes;
      const doc = t.server.handle.openapi as {
        paths: Record<string, Record<string, { 'x-extension'?: boolean; parameters?: { name: string }[] }>>;
      };
      for (const s of searches) {
        const template =
          P + s.path() in doc.paths
            ? P + s.path()
            : Object.keys(doc.paths).find((p) =>
                new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(P + s.path()),
              );
        expect(template, s.name).to.be.a('string');
        const exportOp = doc.paths[`${template}/export`]?.post;
        expect(exportOp?.['x-extension'], s.name).to.equal(true);
        expect(
          doc.paths[template as string].post.parameters?.map((p) => p.name),
          s.name,
        ).to.include('cursor');
        const route = routes.find((r) => P + r.path === `${template}/export`);
        expect(route?.lane, s.name).to.equal('heavy');
      }
    });
  });
});
