/**
 * Organization subtrees of any size: a subtree is one term on the ancestry every org-scoped
 * record carries (docs/adr/0085), so an admin whose organization has more descendants than
 * Elasticsearch accepts terms in one query (65,536) still searches, counts and aggregates it;
 * and moving an organization rewrites that ancestry in the background (docs/adr/0086) while
 * reads stay exact (docs/adr/0087).
 *
 *   dist ── 66,000 customers, 40 of them ── 100 sites each   (70,000 descendants, seeded through the store;
 *                                                             more direct children than one terms query takes)
 *   root ─┬─ oldParent ── moved ── movedSite    (10,000 agents below `moved`)
 *         └─ newParent
 */
import { expect } from 'chai';
import { startTestApp, RUN_PREFIX, uid, type TestApp } from '../helpers/app.js';
import { agentDoc, createEndpointDocs } from '../helpers/endpoint-store.js';
import { deviceDoc } from '../helpers/device-fixtures.js';
import { DocStore } from '../../src/store/doc-store.js';
import type { OrganizationDoc } from '../../src/resources/organizations/store.js';
import type { Api } from '../helpers/http.js';

interface Page {
  totalCount: number;
  items: { id: string; orgId: string }[];
}

interface MoveStatus {
  orgId: string;
  state: 'RUNNING' | 'DONE';
  recordsRewritten: number;
  recordsRemaining: number;
  fromParentId?: string;
  toParentId?: string;
}

const CUSTOMERS = 66_000;
const CUSTOMERS_WITH_SITES = 40;
const SITES_PER_CUSTOMER = 100;

/** Registers organizations straight into the organizations index (70,000 through the API would take too long), then reloads the tree. */
async function seedOrganizations(t: TestApp, docs: OrganizationDoc[]): Promise<void> {
  const store = new DocStore<OrganizationDoc>(t.server.store, 'organizations', 'organization');
  for (let i = 0; i < docs.length; i += 5000) {
    const res = await store.bulk(
      docs.slice(i, i + 5000).flatMap((d) => [{ create: { _id: d.id } }, d]),
      { refresh: false },
    );
    expect(res.errors, 'organizations seeded').to.equal(false);
  }
  await store.refresh();
  await t.server.handle.services.orgs.reload();
}

function orgDoc(id: string, ancestors: string[]): OrganizationDoc {
  return {
    id,
    name: `Org ${id}`,
    ...(ancestors.length > 0 ? { parentId: ancestors[ancestors.length - 1] } : {}),
    ancestors,
    createdAt: new Date().toISOString(),
    createdBy: { username: 'seed', authenticator: 'none' },
  };
}

const total = (p: Page): number => p.totalCount;

describe('organization subtrees of any size', function () {
  this.timeout(900_000);
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ ECS_INDEX_PREFIX: `${RUN_PREFIX}-zorg` });
  });
  after(() => t?.close());

  describe('an admin of an organization with 70,000 descendants', () => {
    const dist = uid('dist');
    const sites: string[] = [];
    const utmOrgs: string[] = [];
    let admin: Api;
    const AGENTS = 3000;
    const UTMS = 600;
    /** Agents of direct children (customers), the last one among them: what direct-children returns. */
    const directAgents = Array.from({ length: 5 }, (_, k) => ({ id: `${dist}-d${k}`, orgId: `${dist}-c${CUSTOMERS - 1 - k * 9973}` }));

    before(async () => {
      await t.world.org(undefined, dist);
      const docs: OrganizationDoc[] = [];
      for (let c = 0; c < CUSTOMERS; c++) {
        const cust = `${dist}-c${c}`;
        docs.push(orgDoc(cust, [dist]));
        for (let s = 0; s < (c < CUSTOMERS_WITH_SITES ? SITES_PER_CUSTOMER : 0); s++) {
          const site = `${cust}-s${s}`;
          docs.push(orgDoc(site, [dist, cust]));
          sites.push(site);
        }
      }
      expect(docs.length).to.equal(70_000);
      await seedOrganizations(t, docs);
      // Records in sites all over the subtree (the last site too), and one in an unrelated organization.
      const pick = (i: number): string => sites[(i * 7919) % sites.length];
      utmOrgs.push(...Array.from({ length: UTMS }, (_, i) => pick(i)));
      await createEndpointDocs(t.server.store, [
        ...Array.from({ length: AGENTS }, (_, i) => agentDoc(`${dist}-a${i}`, i === 0 ? sites[sites.length - 1] : pick(i))),
        ...directAgents.map((a) => agentDoc(a.id, a.orgId)),
        // Records as the API would have written them (the migration fixture's odd addresses are for the migration).
        ...Array.from({ length: UTMS }, (_, i) => ({ ...deviceDoc(i % 2 ? 'EXTERNAL_UTM' : 'VC_UTM', i, pick(i), `${dist}-u`), internalIps: ['10.0.0.1'] })),
      ]);
      const outsider = await t.world.org();
      await t.world.endpoint(outsider);
      admin = t.world.as(await t.world.token('admin', dist));
    });

    it('page-searches its whole subtree (agents and UTMs) and nothing else', async () => {
      const agents = await admin.post<Page>('/endpoint/page-search', { criteria: {}, pageRequest: { size: 50 } });
      expect(agents.status, agents.text).to.equal(200);
      expect(total(agents.body)).to.equal(AGENTS + directAgents.length);
      const utms = await admin.post<Page>('/utm-endpoint/searchPage', { criteria: { orgId: dist, includeChildren: true }, pageRequest: { size: 50 } });
      expect(utms.status, utms.text).to.equal(200);
      expect(total(utms.body)).to.equal(UTMS);
      const cust = `${dist}-c0`;
      const expected = utmOrgs.filter((o) => o.startsWith(`${cust}-`)).length;
      expect(expected).to.be.greaterThan(0).and.lessThan(UTMS);
      const below = await admin.post<Page>('/utm-endpoint/searchPage', { criteria: { orgId: cust, includeChildren: true } });
      expect(below.status, below.text).to.equal(200);
      expect(total(below.body)).to.equal(expected);
    });

    it('counts and aggregates its whole subtree', async () => {
      const count = await admin.post<{ count: number }>('/utm-endpoint/count', { orgId: dist, includeChildren: true });
      expect(count.status, count.text).to.equal(200);
      expect(count.body.count).to.equal(UTMS);
      const models = await admin.post<{ key: string; count: number }[]>('/utm-endpoint/model/aggregation', { orgId: dist, includeChildren: true });
      expect(models.status, models.text).to.equal(200);
      expect(models.body.reduce((n, b) => n + b.count, 0)).to.equal(UTMS);
      const statuses = await admin.post<{ key: string; count: number }[]>('/endpoint/connection-status/aggregation', {});
      expect(statuses.status, statuses.text).to.equal(200);
      expect(statuses.body.reduce((n, b) => n + b.count, 0)).to.equal(AGENTS + directAgents.length);
      const descendants = await admin.get<{ id: string }[]>(`/endpoint/by-org-id/${dist}/all-descendants`);
      expect(descendants.status, descendants.text).to.equal(200);
      expect(descendants.body.length).to.equal(AGENTS + directAgents.length);
    });

    it('lists the agents of its 66,000 direct children, and only theirs', async () => {
      const children = await admin.get<{ id: string; orgId: string }[]>(`/endpoint/by-org-id/${dist}/direct-children`);
      expect(children.status, children.text).to.equal(200);
      const got = children.body.map((e) => `${e.id}@${e.orgId}`).sort();
      expect(got).to.deep.equal(directAgents.map((a) => `${a.id}@${a.orgId}`).sort());
    });

    it('an admin of one customer sees only that customer’s sites', async () => {
      const cust = `${dist}-c0`;
      const custAdmin = t.world.as(await t.world.token('admin', cust));
      const res = await custAdmin.post<Page>('/utm-endpoint/searchPage', { criteria: {}, pageRequest: { size: 1000 } });
      expect(res.status, res.text).to.equal(200);
      const items = res.body.items;
      expect(items.length).to.equal(utmOrgs.filter((o) => o.startsWith(`${cust}-`)).length);
      expect(items.every((e) => e.orgId.startsWith(`${cust}-`))).to.equal(true);
    });
  });

  describe('moving an organization with 10,000 endpoints below it', () => {
    const root = uid('root');
    const oldParent = `${root}-old`;
    const newParent = `${root}-new`;
    const moved = `${root}-moved`;
    const movedSite = `${moved}-site`;
    const ids: string[] = [];
    const OWN = 5;

    before(async () => {
      await t.world.org(undefined, root);
      await t.world.org(root, oldParent);
      await t.world.org(root, newParent);
      await t.world.org(oldParent, moved);
      await t.world.org(moved, movedSite);
      for (let i = 0; i < 10_000; i++) ids.push(`${moved}-a${String(i).padStart(5, '0')}`);
      for (let i = 0; i < ids.length; i += 2500) {
        await createEndpointDocs(t.server.store, ids.slice(i, i + 2500).map((id, j) => agentDoc(id, (i + j) % 2 ? moved : movedSite)));
      }
      // Records of the parents themselves, which never move.
      await createEndpointDocs(t.server.store, [
        ...Array.from({ length: OWN }, (_, i) => agentDoc(`${oldParent}-own${i}`, oldParent)),
        ...Array.from({ length: OWN }, (_, i) => agentDoc(`${newParent}-own${i}`, newParent)),
      ]);
    });

    it('every endpoint is under the new parent when the move is done, none lost or doubled, and no read meanwhile crosses organizations', async () => {
      const oldAdmin = t.world.as(await t.world.token('admin', oldParent));
      const newAdmin = t.world.as(await t.world.token('admin', newParent));
      const rootReader = t.world.as(await t.world.token('reader', root));
      const countOf = async (api: Api): Promise<number> => {
        const res = await api.post<Page>('/endpoint/page-search', { criteria: {}, pageRequest: { size: 20 } });
        expect(res.status, res.text).to.equal(200);
        return total(res.body);
      };
      expect(await countOf(oldAdmin)).to.equal(10_000 + OWN);
      expect(await countOf(newAdmin)).to.equal(OWN);

      const res = await t.admin.patch(`/admin/organizations/${moved}`, { parentId: newParent });
      expect(res.status, res.text).to.equal(200);

      // Reads during the move: the old parent's admin never sees a moved record, the new one sees all of them.
      let readsWhileRunning = 0;
      let status: MoveStatus | undefined;
      for (;;) {
        const s = await t.admin.get<MoveStatus>(`/admin/organizations/${moved}/move`);
        expect(s.status, s.text).to.equal(200);
        status = s.body;
        const running = status.state === 'RUNNING';
        const [oldCount, newCount, rootCount] = await Promise.all([countOf(oldAdmin), countOf(newAdmin), countOf(rootReader)]);
        expect(oldCount, 'old parent during the move').to.equal(OWN);
        expect(newCount, 'new parent during the move').to.equal(10_000 + OWN);
        expect(rootCount, 'common root during the move').to.equal(10_000 + 2 * OWN);
        const leak = await oldAdmin.post<Page>('/endpoint/page-search', { criteria: {}, pageRequest: { size: 50 } });
        const leaked = leak.body.items.filter((e) => e.orgId === moved || e.orgId === movedSite);
        expect(leaked, 'moved records seen by the old parent').to.deep.equal([]);
        if (!running) break;
        readsWhileRunning++;
      }
      expect(readsWhileRunning, 'reads happened while the move was running').to.be.greaterThan(0);
      expect(status).to.include({ orgId: moved, state: 'DONE', fromParentId: oldParent, toParentId: newParent, recordsRemaining: 0 });
      expect(status.recordsRewritten).to.be.at.least(10_000);

      // Done: every record carries the new ancestry (no compensation left), each exactly once.
      const below = await newAdmin.get<{ id: string }[]>(`/endpoint/by-org-id/${newParent}/all-descendants`);
      expect(below.status, below.text).to.equal(200);
      const found = below.body.map((e) => e.id);
      expect(found.length, 'none doubled').to.equal(new Set(found).size);
      expect([...found].sort(), 'none lost').to.deep.equal([...ids].sort());
      const stale = await t.server.store.client.count({
        index: `${RUN_PREFIX}-zorg-endpoints`,
        query: { bool: { filter: [{ term: { orgPath: moved } }], must_not: [{ term: { orgPath: newParent } }] } },
      });
      expect(stale.count, 'records left with the old ancestry').to.equal(0);
      expect(await countOf(oldAdmin)).to.equal(OWN);

      // The next move is accepted.
      const next = await t.admin.patch(`/admin/organizations/${movedSite}`, { parentId: root });
      expect(next.status, next.text).to.equal(200);
    });
  });
});
