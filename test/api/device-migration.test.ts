import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { RUN_PREFIX, expectErrorBody, startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_DATABASE_URL, dropSchema, holdAdvisoryLock, sql, testSchema } from '../helpers/postgres.js';
import { AWKWARD_TEXT, deviceDoc, indexOps } from '../helpers/device-fixtures.js';
import type { EndpointDoc } from '../../src/resources/endpoints/model.js';
import type { EndpointStore } from '../../src/resources/endpoints/store.js';
import { DeviceMigrationService } from '../../src/migration/device-migration.js';
import { openDatabase } from '../../src/migration/sql-db.js';
import { createLogger } from '../../src/log.js';
import { ConflictError } from '../../src/errors.js';
import { bulkEndpoints, endpointStore } from '../helpers/endpoint-store.js';

interface Counts {
  sourceCount: number;
  destCount: number;
  ignoredCount: number;
}

const UTM = 2400;
const LTE = 1600;
const utmDeleted = (i: number): boolean => i % 120 === 7; // 20
const lteDeleted = (i: number): boolean => i % 160 === 3; // 10

describe('device migration (spec 4.4)', function () {
  this.timeout(180_000);
  const prefix = `${RUN_PREFIX}-dm`;
  const schema = testSchema('dm');
  let t: TestApp;
  let store: EndpointStore;
  let orgId: string;
  const utm: EndpointDoc[] = [];
  const lte: EndpointDoc[] = [];

  const liveUtm = (): EndpointDoc[] => utm.filter((d) => !d.deleted);
  const countRows = async (table: string): Promise<{ rows: number; ids: number }> => {
    const [r] = await sql<{ rows: string; ids: string }>(schema, `SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM ${table}`);
    return { rows: Number(r.rows), ids: Number(r.ids) };
  };
  const migratedInEs = (types: string[]): Promise<number> =>
    store.count({ bool: { filter: [{ terms: { type: types } }, { term: { externalStatus: 'MIGRATED_TO_SQL' } }] } });

  before(async () => {
    t = await startTestApp({ ECS_INDEX_PREFIX: prefix, DATABASE_URL: TEST_DATABASE_URL, ECS_SQL_SCHEMA: schema });
    store = endpointStore(t.server.store);
    orgId = await t.world.org();
    for (let i = 0; i < UTM; i++) utm.push({ ...deviceDoc(i % 2 ? 'VC_UTM' : 'EXTERNAL_UTM', i, orgId, 'dm'), deleted: utmDeleted(i) });
    for (let i = 0; i < LTE; i++) lte.push({ ...deviceDoc('VC_LTE', i, orgId, 'dm'), deleted: lteDeleted(i) });
    const agents = Array.from({ length: 30 }, (_, i) => deviceDoc('VC_ENDPOINT', i, orgId, 'dm'));
    const res = await bulkEndpoints(t.server.store, indexOps([...utm, ...lte, ...agents]));
    expect(res.errors, JSON.stringify(res.items.find((i) => i.index?.error))).to.equal(false);
  });
  after(async () => {
    await t.close();
    await dropSchema(schema);
  });

  it('GET utm-devices copies every live UTM record once, with every field, and marks it MIGRATED_TO_SQL', async () => {
    const res = await t.anon.get<Counts>('/device-migration/utm-devices');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ sourceCount: UTM, destCount: UTM - 20, ignoredCount: 20 });

    expect(await countRows('utm_devices')).to.deep.equal({ rows: UTM - 20, ids: UTM - 20 });
    const [{ types }] = await sql<{ types: string[] }>(schema, 'SELECT array_agg(DISTINCT type ORDER BY type) AS types FROM utm_devices');
    expect(types).to.deep.equal(['EXTERNAL_UTM', 'VC_UTM']);
    const deletedIds = utm.filter((d) => d.deleted).map((d) => d.id);
    expect(await sql(schema, 'SELECT id FROM utm_devices WHERE id = ANY($1)', [deletedIds])).to.have.length(0);
    expect(await migratedInEs(['EXTERNAL_UTM', 'VC_UTM'])).to.equal(UTM - 20);
    expect(await migratedInEs(['VC_LTE', 'VC_ENDPOINT'])).to.equal(0);
    expect((await store.get(deletedIds[0]))?.doc.externalStatus).to.not.equal('MIGRATED_TO_SQL');

    // A record with awkward text (COPY escaping) read back column by column.
    const d = utm[97];
    const [row] = await sql<Record<string, unknown>>(schema, 'SELECT * FROM utm_devices WHERE id = $1', [d.id]);
    const after = await store.get(d.id);
    expect(row).to.deep.include({
      id: d.id,
      org_id: orgId,
      type: d.type,
      client_version: d.clientVersion,
      cert_subject: d.certSubject,
      display_name: AWKWARD_TEXT,
      host_info: d.hostInfo,
      last_ip: d.lastIp,
      fim_hoh: 'fim',
      pan_hoh: 'pan',
      latest_config: false,
      internal_ips: ['10.0.0.1', 'odd "ip" \\ {x}'],
      connection_status: 'CONNECTED',
      external_status: d.externalStatus,
      serial_id: d.serialId,
      site_id: d.siteId,
      last_mac_address: d.lastMacAddress,
      meraki_network_id: d.merakiNetworkId,
      model: d.model,
      common_name: d.commonName,
      manufacturer: 'vendor',
      latitude: d.latitude,
      longitude: d.longitude,
      wan_status: 'WAN1',
      interfaces: { WAN1: 'ACTIVE', WAN2: 'INACTIVE' },
      site: d.site,
      created_by: d.createdBy,
      updated_by: d.updatedBy,
      source_version: String(after?.version),
    });
    for (const [col, field] of [
      ['last_connect', 'lastConnect'],
      ['last_disconnect', 'lastDisconnect'],
      ['cert_expiry', 'certExpiry'],
      ['last_event_update_ts', 'lastEventUpdateTs'],
      ['last_security_event_update_ts', 'lastSecurityEventUpdateTs'],
      ['created_at', 'createdAt'],
      ['updated_at', 'updatedAt'],
    ] as const) {
      expect((row[col] as Date).toISOString(), col).to.equal(d[field]);
    }
    expect(after?.doc.externalStatus).to.equal('MIGRATED_TO_SQL');
    expect(after?.doc.displayName).to.equal(AWKWARD_TEXT);

    const applied = await sql<{ version: number }>(schema, 'SELECT version FROM schema_migrations');
    expect(applied.map((r) => r.version)).to.deep.equal([1]);
    const indexes = await sql<{ indexname: string }>(schema, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`, [schema]);
    expect(indexes.map((r) => r.indexname)).to.include.members([
      'utm_devices_pkey',
      'utm_devices_org_id',
      'utm_devices_serial_id',
      'utm_devices_site_id',
      'lte_devices_pkey',
      'lte_devices_org_id',
      'lte_devices_imei',
      'lte_devices_site_id',
    ]);
  });

  it('a second run ignores unchanged records and copies only what changed since (status kept; deleted rows removed)', async () => {
    const live = liveUtm();
    const changed = [live[0], live[500], live[1000]];
    for (const d of changed) await store.patch(d.id, { displayName: `renamed ${d.id}` });
    const removed = live[1500];
    await store.patch(removed.id, { deleted: true });

    const res = await t.anon.get<Counts>('/device-migration/utm-devices');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ sourceCount: UTM, destCount: 3, ignoredCount: UTM - 3 });

    const rows = await sql<{ id: string; display_name: string; external_status: string }>(
      schema,
      'SELECT id, display_name, external_status FROM utm_devices WHERE id = ANY($1) ORDER BY id',
      [changed.map((d) => d.id)],
    );
    expect(rows.map((r) => r.display_name)).to.deep.equal(changed.map((d) => `renamed ${d.id}`));
    // The device's own status survives the re-copy of a record that only carries the mark.
    expect(rows.map((r) => r.external_status)).to.deep.equal(changed.map((d) => d.externalStatus));
    expect(await sql(schema, 'SELECT id FROM utm_devices WHERE id = $1', [removed.id])).to.have.length(0);
    expect(await countRows('utm_devices')).to.deep.equal({ rows: UTM - 21, ids: UTM - 21 });

    const third = await t.anon.get<Counts>('/device-migration/utm-devices');
    expect(third.body).to.deep.equal({ sourceCount: UTM, destCount: 0, ignoredCount: UTM });
  });

  it('a run interrupted between batches and run again ends with every LTE record exactly once', async () => {
    const svc = t.server.handle.services.deviceMigration;
    const crash = svc.migrate('lte', {
      batchSize: 200,
      onProgress: (p) => {
        if (p.batches === 3) throw new Error('simulated crash after batch 3');
      },
    });
    await crash.then(
      () => expect.fail('the run should have stopped'),
      (err: Error) => expect(err.message).to.contain('simulated crash'),
    );
    // Three committed batches of 200, minus the deleted ones among them (i = 3, 163, 323, 483).
    expect(await countRows('lte_devices')).to.deep.equal({ rows: 596, ids: 596 });
    expect(await migratedInEs(['VC_LTE'])).to.equal(596);

    const res = await t.anon.get<Counts>('/device-migration/lte-devices');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ sourceCount: LTE, destCount: LTE - 10 - 596, ignoredCount: 596 + 10 });
    expect(await countRows('lte_devices')).to.deep.equal({ rows: LTE - 10, ids: LTE - 10 });
    const ids = (await sql<{ id: string }>(schema, 'SELECT id FROM lte_devices ORDER BY id')).map((r) => r.id);
    expect(ids).to.deep.equal(lte.filter((d) => !d.deleted).map((d) => d.id).sort());
    expect(await migratedInEs(['VC_LTE'])).to.equal(LTE - 10);

    const d = lte[5];
    const [row] = await sql<Record<string, unknown>>(schema, 'SELECT imei, iccid, site_id, data_usage, data_allowance, pool_org_id, telco, mtn FROM lte_devices WHERE id = $1', [d.id]);
    expect(row).to.deep.equal({
      imei: d.imei,
      iccid: d.iccid,
      site_id: d.site?.id,
      data_usage: d.dataUsage,
      data_allowance: String(d.dataAllowance),
      pool_org_id: orgId,
      telco: 'telco',
      mtn: d.mtn,
    });
  });

  it('a run already in progress for the same family answers 409, in this instance and from another one', async () => {
    const svc = t.server.handle.services.deviceMigration;
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const inProgress = new Promise<void>((r) => (reached = r));
    const run = svc.migrate('utm', {
      batchSize: 500,
      onProgress: async (p) => {
        if (p.batches === 1) {
          reached();
          await paused;
        }
      },
    });
    await inProgress;
    try {
      const res = await t.anon.get('/device-migration/utm-devices');
      expectErrorBody(res, 409, '/endpoint-control-service/v1/device-migration/utm-devices');
      expect((res.body as { exception: string }).exception).to.equal('ConflictError');
      // Another instance of the service (its own pool, same database) meets the advisory lock.
      const other = new DeviceMigrationService(store, { databaseUrl: TEST_DATABASE_URL, schema, log: createLogger('silent') });
      try {
        await other.migrate('utm').then(
          () => expect.fail('expected a conflict'),
          (err: unknown) => expect(err).to.be.instanceOf(ConflictError),
        );
        // The other family is not blocked.
        expect(await other.migrate('lte')).to.deep.equal({ sourceCount: LTE, destCount: 0, ignoredCount: LTE });
      } finally {
        await other.close();
      }
    } finally {
      release();
    }
    expect(await run).to.deep.equal({ sourceCount: UTM, destCount: 0, ignoredCount: UTM });
  });

  it('a lock held by another process (a CLI run, another instance) also answers 409; once released the run proceeds', async () => {
    const lock = await holdAdvisoryLock(`ecs:device-migration:${schema}:lte`);
    try {
      expectErrorBody(await t.anon.get('/device-migration/lte-devices'), 409);
    } finally {
      await lock.release();
    }
    expect((await t.anon.get<Counts>('/device-migration/lte-devices')).status).to.equal(200);
  });

  it('with a token: system may run it, an organization-scoped admin is 403, an unknown token 401', async () => {
    const scoped = t.world.as(await t.world.token('admin', orgId));
    expectErrorBody(await scoped.get('/device-migration/lte-devices'), 403);
    expectErrorBody(await t.world.as('nope').get('/device-migration/lte-devices'), 401);
    const res = await t.admin.get<Counts>('/device-migration/lte-devices');
    expect(res.body).to.deep.equal({ sourceCount: LTE, destCount: 0, ignoredCount: LTE });
  });

  it('runs the same migration on the embedded PostgreSQL (PGlite) when DATABASE_URL names it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-pglite-'));
    const embedded = await startTestApp({ ECS_INDEX_PREFIX: prefix, DATABASE_URL: `pglite:${path.join(dir, 'db')}` });
    try {
      const first = await embedded.anon.get<Counts>('/device-migration/lte-devices');
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      // A fresh database: every live record is copied (already marked in Elasticsearch, so not re-marked).
      expect(first.body).to.deep.equal({ sourceCount: LTE, destCount: LTE - 10, ignoredCount: 10 });
      const second = await embedded.anon.get<Counts>('/device-migration/lte-devices');
      expect(second.body).to.deep.equal({ sourceCount: LTE, destCount: 0, ignoredCount: LTE });

      const db = await embedded.server.handle.services.deviceMigration.database();
      expect(db.driver).to.equal('pglite');
      const rows = await db.query<{ n: number; ids: number; awkward: string }>(
        `SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids,
                max(display_name) FILTER (WHERE id = $1) AS awkward FROM lte_devices`,
        [lte[97].id],
      );
      expect(rows.rows[0]).to.deep.equal({ n: LTE - 10, ids: LTE - 10, awkward: AWKWARD_TEXT });
      // PGlite is single-process: the data directory is locked while the service holds it.
      await openDatabase(`pglite:${path.join(dir, 'db')}`, 'public').then(
        () => expect.fail('a second open of the same directory should be refused'),
        (err: unknown) => expect(err).to.be.instanceOf(ConflictError).and.have.property('message').that.contains('in use by process'),
      );
      // The real server's rows were not touched by the embedded run.
      expect(await countRows('lte_devices')).to.deep.equal({ rows: LTE - 10, ids: LTE - 10 });
    } finally {
      await embedded.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
