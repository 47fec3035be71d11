import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';
import { deviceDoc, indexOps } from '../helpers/device-fixtures.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';
import type { EndpointStore } from '../../src/resources/endpoints/store.js';
import { ConflictError, ServiceUnavailableError } from '../../src/errors.js';
import { reindex, type ReindexResult } from '../../src/store/reindex.js';
import { loadTemplates } from '../../src/store/indices.js';
import { bulkEndpoints, endpointStore } from '../helpers/endpoint-store.js';
import { waitFor } from '../helpers/wait.js';


describe('reindex with alias swap (ops)', function () {
  this.timeout(180_000);

  describe('a populated index written to during the copy', () => {
    const prefix = `${RUN_PREFIX}-rx`;
    const alias = `${prefix}-endpoints`;
    let t: TestApp;
    let store: EndpointStore;
    let orgId: string;
    const seeded: EndpointDoc[] = [];

    before(async () => {
      t = await startTestApp({ ECS_INDEX_PREFIX: prefix });
      store = endpointStore(t.server.store);
      orgId = await t.world.org();
      for (let i = 0; i < 3000; i++) seeded.push(deviceDoc(i % 3 === 0 ? 'VC_ENDPOINT' : i % 3 === 1 ? 'EXTERNAL_UTM' : 'VC_LTE', i, orgId, 'rx'));
      const res = await bulkEndpoints(t.server.store, indexOps(seeded));
      expect(res.errors).to.equal(false);
    });
    after(() => t.close());

    it('copies every document, catches up creates, updates and deletes made during the copy, swaps the alias; no write is lost', async () => {
      const es = t.server.store.client;
      const writeBlocked = async (): Promise<boolean> => {
        const settings = await es.indices.getSettings({ index: alias, name: 'index.blocks.write' });
        return Object.values(settings).some((x) => String(x.settings?.index?.blocks?.write) === 'true');
      };
      const untouched = seeded[42];
      await store.patch(untouched.id, { displayName: 'version 2' });
      const untouchedBefore = await store.get(untouched.id);
      expect(untouchedBefore?.version).to.equal(2);

      const created = Array.from({ length: 60 }, (_, i) => deviceDoc('VC_UTM', 50_000 + i, orgId, 'rx-new'));
      const updated = seeded.slice(100, 130);
      const deleted = seeded.slice(200, 215);
      const updatedVersions = new Map<string, number>();

      // A client writing all the time, retrying what the store refuses with 503 (the final write block).
      let stop = false;
      const written: string[] = [];
      const writer = (async () => {
        for (let n = 0; !stop && n < 5000; ) {
          const d = deviceDoc('VC_ENDPOINT', 100_000 + n, orgId, 'rx-bg');
          try {
            await store.create(d, { refresh: false });
            written.push(d.id);
            n++;
          } catch (err) {
            if (!(err instanceof ServiceUnavailableError)) throw err;
            // Refused while the final write block holds: wait until the alias's index takes writes again.
            await waitFor(writeBlocked, (blocked) => !blocked || stop, 60_000);
          }
        }
      })();

      let injected = false;
      let result: ReindexResult | undefined;
      try {
        result = await reindex(t.server.store, 'endpoints', {
          force: true,
          batchSize: 500,
          onProgress: async (p) => {
            if (p.phase !== 'copy' || injected) return;
            injected = true; // after the first page: the point in time no longer sees these writes
            expect((await bulkEndpoints(t.server.store, indexOps(created))).errors).to.equal(false);
            for (const d of updated) updatedVersions.set(d.id, (await store.patch(d.id, { displayName: 'changed during the copy' })).version);
            const del = await bulkEndpoints(t.server.store, deleted.map((d) => ({ delete: { _id: d.id } })));
            expect(del.errors).to.equal(false);
          },
        });
      } finally {
        stop = true;
        await writer;
      }
      expect(injected).to.equal(true);
      expect(written.length).to.be.greaterThan(0);
      if (!result) throw new Error('no result');

      expect(result.status).to.equal('reindexed');
      expect(result.from).to.equal(`${alias}-000001`);
      expect(result.to).to.equal(`${alias}-000002`);
      expect(result.copied).to.be.at.least(3000);
      expect(result.caughtUp).to.be.at.least(created.length + updated.length);
      expect(result.removed).to.equal(deleted.length);

      // The alias moved atomically to the new generation; the old one is kept, read-only.
      expect(Object.keys(await es.indices.getAlias({ name: alias }))).to.deep.equal([`${alias}-000002`]);
      const settings = await es.indices.getSettings({ index: `${alias}-000001` });
      expect(settings[`${alias}-000001`].settings?.index?.blocks?.write).to.equal('true');

      // Every document is there: seeded minus deleted, plus those created during the copy and by the writer.
      const expectedIds = new Set([...seeded.map((d) => d.id), ...created.map((d) => d.id), ...written]);
      for (const d of deleted) expectedIds.delete(d.id);
      await store.refresh();
      expect(await store.count({ match_all: {} })).to.equal(expectedIds.size);
      // At the swap the copy held exactly what the frozen old generation holds; the writer's
      // writes refused during the block and retried landed in the new generation only.
      const oldGen = `${alias}-000001`;
      await es.indices.refresh({ index: oldGen });
      const oldCount = (await es.count({ index: oldGen })).count;
      expect(result.documents).to.equal(oldCount);
      const inOld = new Set<string>();
      for (let i = 0; i < written.length; i += 1000) {
        const res = await es.mget({ index: oldGen, ids: written.slice(i, i + 1000), _source: false });
        for (const d of res.docs) if ('found' in d && d.found) inOld.add(d._id);
      }
      expect(oldCount + written.filter((id) => !inOld.has(id)).length).to.equal(expectedIds.size);
      const ids = [...expectedIds];
      for (let i = 0; i < ids.length; i += 1000) {
        const got = await store.getMany(ids.slice(i, i + 1000));
        expect(got.length).to.equal(Math.min(1000, ids.length - i));
      }
      expect(await store.getMany(deleted.map((d) => d.id))).to.have.length(0);

      // Updates made during the copy won, and integer versions moved with the documents.
      for (const h of await store.getMany(updated.map((d) => d.id))) {
        expect(h.doc.displayName).to.equal('changed during the copy');
        expect(h.version).to.equal(updatedVersions.get(h.id));
      }
      const untouchedAfter = await store.get(untouched.id);
      expect(untouchedAfter?.version).to.equal(untouchedBefore?.version);
      expect(untouchedAfter?.doc.displayName).to.equal('version 2');

      // Writes go on through the alias into the new generation, versions continuing.
      const next = await store.patch(untouched.id, { displayName: 'version 3' });
      expect(next.version).to.equal(3);
      expect((await es.get({ index: `${alias}-000002`, id: untouched.id }))._version).to.equal(3);

      // A second run finds the mapping current and does nothing.
      const again = await reindex(t.server.store, 'endpoints');
      expect(again.status).to.equal('current');
      expect(again.from).to.equal(`${alias}-000002`);
      expect(Object.keys(await es.indices.getAlias({ name: alias }))).to.deep.equal([`${alias}-000002`]);
    });

    it('a run that fails before the swap leaves the source writable; its leftover needs --restart', async () => {
      const es = t.server.store.client;
      await reindex(t.server.store, 'endpoints', {
        force: true,
        batchSize: 500,
        onProgress: () => {
          throw new Error('simulated failure during the copy');
        },
      }).then(
        () => expect.fail('the run should fail'),
        (err: Error) => expect(err.message).to.contain('simulated failure'),
      );
      expect(Object.keys(await es.indices.getAlias({ name: alias }))).to.deep.equal([`${alias}-000002`]);
      await store.patch(seeded[1].id, { displayName: 'still writable' });

      await reindex(t.server.store, 'endpoints', { force: true }).then(
        () => expect.fail('a leftover generation should stop the run'),
        (err: unknown) => {
          expect(err).to.be.instanceOf(ConflictError);
          expect((err as Error).message).to.contain('--restart');
        },
      );
      const restarted = await reindex(t.server.store, 'endpoints', { force: true, restart: true, deleteOld: true });
      expect(restarted).to.include({ status: 'reindexed', from: `${alias}-000002`, to: `${alias}-000003`, oldIndex: 'deleted' });
      expect(await es.indices.exists({ index: `${alias}-000002` })).to.equal(false);
      expect((await store.get(seeded[1].id))?.doc.displayName).to.equal('still writable');
    });
  });

  describe('start-up check of mapping versions', function () {
    this.timeout(600_000);
    const prefix = `${RUN_PREFIX}-old`;
    const alias = `${prefix}-client-versions`;

    before(async () => {
      // An index created by an older release: its mapping records version 0, and a field's type
      // differs (a change Elasticsearch cannot make in place; added fields are applied at start).
      const es = new Client({ node: (await testElasticsearch()).url });
      try {
        const t = loadTemplates().find((x) => x.name === 'client-versions');
        await es.indices.create({
          index: `${alias}-000001`,
          settings: { number_of_replicas: 0 },
          mappings: { ...t?.template.mappings, properties: { ...t?.template.mappings.properties, linux: { type: 'text' } }, _meta: { version: 0 } },
          aliases: { [alias]: { is_write_index: true } },
        });
      } finally {
        await es.close();
      }
    });

    it('warns naming an index whose mapping is older than its template, and reindexes it into its next generation by itself while serving', async () => {
      const warnings = (logs: string[]): { index: string; msg: string }[] =>
        logs
          .map((l) => JSON.parse(l) as { level: number; index?: string; msg: string })
          .filter((l) => l.level === 40 && l.index !== undefined)
          .map((l) => ({ index: l.index as string, msg: l.msg }));

      const t = await startTestApp({ ECS_INDEX_PREFIX: prefix, ECS_SCHEMA_CHECK_SECONDS: '1' });
      try {
        const w = warnings(t.logs);
        expect(w).to.have.length(1);
        expect(w[0].index).to.equal(`${alias}-000001`);
        expect(w[0].msg).to.contain('older than its template').and.contain('npm run ops -- reindex client-versions');

        // Served throughout: a write before or during the copy is in the new generation.
        const put = await t.admin.put('/client-version/default', { linux: '5.0.0', mac: '5.0.1', windows: '5.0.2' });
        expect(put.status, put.text).to.equal(200);
        const es = t.server.store.client;
        const moved = await waitFor(
          async () => Object.keys(await es.indices.getAlias({ name: alias })),
          (indices) => indices.length === 1 && indices[0] === `${alias}-000002`,
          120_000,
          200,
        );
        expect(moved.met, JSON.stringify(moved.value)).to.equal(true);
        const mapping = await es.indices.getMapping({ index: alias });
        const current = loadTemplates().find((x) => x.name === 'client-versions');
        expect(Object.values(mapping)[0].mappings._meta).to.deep.include({ version: current?.version });
        expect((await t.admin.get('/client-version/default')).body).to.deep.equal({ linux: 'v5.0.0', mac: 'v5.0.1', windows: 'v5.0.2' });
        // The line follows the swap.
        const said = await waitFor(async () => t.logs.some((l) => l.includes('schema: client-versions reindexed into')), (v) => v, 10_000, 50);
        expect(said.met, 'the reindex logged its end').to.equal(true);
      } finally {
        await t.close();
      }
      const restarted = await startTestApp({ ECS_INDEX_PREFIX: prefix });
      try {
        expect(warnings(restarted.logs)).to.deep.equal([]);
      } finally {
        await restarted.close();
      }
    });
  });
});
