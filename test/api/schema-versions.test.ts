/**
 * Schema versions during a rolling upgrade: an instance never replaces a template of a higher
 * version than its own and says so in one log line; it restores a template an older instance
 * put back (an older release writes its templates at every start), within ECS_SCHEMA_CHECK_SECONDS.
 * An index prefix of its own: the test writes templates under it.
 */
import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX, startTestApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { loadTemplates } from '../../src/store/indices.js';
import { agentDoc } from '../helpers/endpoint-store.js';

interface LogLine {
  level: number;
  msg: string;
  newerTemplates?: Record<string, number>;
}

describe('schema versions: templates across releases', function () {
  this.timeout(600_000);
  const prefix = `${RUN_PREFIX}-zschema`;
  const newer = `${prefix}-jobs`;
  const older = `${prefix}-tokens`;
  let app: TestApp;

  const template = (name: string) => {
    const t = loadTemplates().find((x) => x.name === name);
    if (!t) throw new Error(name);
    return t;
  };
  const storedVersion = async (name: string): Promise<number | undefined> => {
    const res = await app.server.store.client.indices.getIndexTemplate({ name });
    const t = res.index_templates[0].index_template;
    return t.version ?? (t._meta as { version?: number } | undefined)?.version;
  };

  before(async () => {
    // A newer release already put its jobs template (version 99) on the store this instance joins.
    const es = new Client({ node: (await testElasticsearch()).url });
    try {
      const jobs = template('jobs');
      await es.indices.putIndexTemplate({
        name: newer,
        index_patterns: [`${newer}-*`],
        priority: 100,
        version: 99,
        template: { ...jobs.template, mappings: { ...jobs.template.mappings, _meta: { version: 99 } } },
        _meta: { version: 99 },
      });
    } finally {
      await es.close();
    }
    app = await startTestApp({ ECS_INDEX_PREFIX: prefix, ECS_SCHEMA_CHECK_SECONDS: '1' });
  });
  after(async () => {
    await app?.close();
  });

  it('leaves a newer template as it is and says so in one log line; its own templates carry their version', async () => {
    expect(await storedVersion(newer)).to.equal(99);
    const lines = app.logs.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as LogLine);
    const said = lines.filter((l) => l.newerTemplates !== undefined);
    expect(said, JSON.stringify(said)).to.have.length(1);
    expect(said[0].level).to.equal(40);
    expect(said[0].newerTemplates).to.deep.equal({ [newer]: 99 });
    expect(said[0].msg).to.contain(newer);
    for (const t of loadTemplates().filter((x) => x.name !== 'jobs')) {
      expect(await storedVersion(`${prefix}-${t.name}`), t.name).to.equal(t.version);
    }
    // The service serves on the newer release's template (same mapping here).
    expect((await app.admin.get('/jobs')).status).to.equal(200);
  });

  it('restores a template an older instance put back, within the check interval, and logs it', async () => {
    const tokens = template('tokens');
    expect(tokens.version).to.be.greaterThan(1);
    // What an instance of an earlier release does at start: its template, `_meta.version` only.
    await app.server.store.client.indices.putIndexTemplate({
      name: older,
      index_patterns: [`${older}-*`],
      priority: 100,
      template: { mappings: { dynamic: 'strict', properties: { id: { type: 'keyword' } }, _meta: { version: 1 } } },
      _meta: { version: 1 },
    });
    const restored = await waitFor(() => storedVersion(older), (v) => v === tokens.version, 30_000, 100);
    expect(restored.met, `template version ${restored.value}`).to.equal(true);
    const res = await app.server.store.client.indices.getIndexTemplate({ name: older });
    expect(res.index_templates[0].index_template.template?.mappings?.properties).to.include.keys('revokedAt', 'lastUsedAt');
    // The line follows the check's other work (mappings), so it may come just after the template.
    const said = await waitFor(
      async () => app.logs.some((l) => l.includes('brought the store') && l.includes(older)),
      (v) => v,
      10_000,
      50,
    );
    expect(said.met, 'the restoring check logged it').to.equal(true);
    // The newer release's template is still left alone by every check, and no second line says so.
    expect(await storedVersion(newer)).to.equal(99);
    expect(app.logs.filter((l) => l.includes('"newerTemplates"'))).to.have.length(1);
  });
});

/**
 * Hooks of a describe block whose store holds an index an earlier release built (`build`), on
 * which the app then starts, checking the schema every second.
 */
function startedOnOlderIndex(prefix: string, build: (es: Client) => Promise<void>): { app: TestApp; es: Client } {
  const started = {} as { app: TestApp; es: Client };
  before(async () => {
    started.es = new Client({ node: (await testElasticsearch()).url });
    await build(started.es);
    started.app = await startTestApp({ ECS_INDEX_PREFIX: prefix, ECS_SCHEMA_CHECK_SECONDS: '1' });
  });
  after(async () => {
    await started.app?.close();
    await started.es?.close();
  });
  return started;
}

/** Waits until `alias` points at its second generation alone. */
async function expectSecondGeneration(es: Client, alias: string): Promise<void> {
  const swapped = await waitFor(
    async () => Object.keys(await es.indices.getAlias({ name: alias })),
    (indices) => indices.length === 1 && indices[0] === `${alias}-000002`,
    60_000,
    100,
  );
  expect(swapped.met, `alias on ${swapped.value.join(', ')}`).to.equal(true);
}

describe('schema versions: a change Elasticsearch acknowledges without applying', function () {
  this.timeout(600_000);
  const prefix = `${RUN_PREFIX}-zgeneration`;
  const alias = `${prefix}-jobs`;
  const started = startedOnOlderIndex(prefix, async (es) => {
    // The jobs index as the release before jobs version 2 built it: the creator an unindexed
    // object, no organization path. Given the template's properties for the creator,
    // Elasticsearch acknowledges the put and keeps the object disabled.
    const jobs = loadTemplates().find((t) => t.name === 'jobs');
    if (!jobs) throw new Error('jobs template');
    const { orgPath, ...properties } = jobs.template.mappings.properties ?? {};
    expect(orgPath, 'the jobs template indexes the organization path').to.not.equal(undefined);
    await es.indices.create({
      index: `${alias}-000001`,
      aliases: { [alias]: { is_write_index: true } },
      settings: jobs.template.settings,
      mappings: {
        ...jobs.template.mappings,
        properties: { ...properties, creator: { type: 'object', enabled: false } },
        _meta: { version: jobs.version - 1 },
      },
    });
  });

  it('moves the index into its next generation instead of marking the old one upgraded', async () => {
    const { app, es } = started;
    const jobs = loadTemplates().find((t) => t.name === 'jobs');
    await expectSecondGeneration(es, alias);
    const mapping = await es.indices.getMapping({ index: [`${alias}-000001`, `${alias}-000002`] });
    const next = mapping[`${alias}-000002`].mappings;
    expect(next._meta).to.deep.include({ version: jobs?.version });
    expect(next.properties?.creator).to.not.have.property('enabled');
    expect(next.properties?.creator).to.have.nested.property('properties.tokenId.type', 'keyword');
    // The old generation took the added field in place (this release's writes were accepted
    // there until the swap) and still says it holds the older version.
    const previous = mapping[`${alias}-000001`].mappings;
    expect(previous._meta).to.deep.include({ version: (jobs?.version ?? 0) - 1 });
    expect(previous.properties).to.have.nested.property('orgPath.type', 'keyword');
    const warned = app.logs.find((l) => l.includes('"objectParametersKept":["creator"]'));
    expect(warned, 'the start-up warning names the object').to.be.a('string');
    expect(warned).to.contain('"fieldsAdded":["orgPath"]');
    expect((await app.admin.get('/jobs')).status).to.equal(200);
  });
});

describe('schema versions: an index built before its template sorted it', function () {
  this.timeout(600_000);
  const prefix = `${RUN_PREFIX}-zsorted`;
  const alias = `${prefix}-endpoints`;
  // Written in an order that is not the ids' order, so the page shows the sort.
  const ids = Array.from({ length: 25 }, (_, i) => `agent-${String((i * 7) % 25).padStart(2, '0')}`);
  const started = startedOnOlderIndex(prefix, async (es) => {
    // The endpoints index as the release before the sort built it: same fields, no index sort.
    const t = loadTemplates().find((x) => x.name === 'endpoints');
    if (!t) throw new Error('endpoints template');
    const { sort, ...unsorted } = t.template.settings as Record<string, unknown>;
    expect(sort, 'the endpoints template sorts its index').to.deep.equal({ field: 'id', order: 'asc' });
    await es.indices.create({
      index: `${alias}-000001`,
      aliases: { [alias]: { is_write_index: true } },
      settings: unsorted,
      mappings: { ...t.template.mappings, _meta: { version: t.version - 1 } },
    });
    await es.bulk({ index: alias, refresh: true, operations: ids.flatMap((id) => [{ create: { _id: id } }, agentDoc(id, 'org-before-sort')]) });
  });

  it('moves the endpoints into a generation sorted by id, and its pages count every record', async () => {
    const { app, es } = started;
    await expectSecondGeneration(es, alias);
    const settings = await es.indices.getSettings({ index: `${alias}-*`, flat_settings: true });
    expect(settings[`${alias}-000002`].settings).to.deep.include({ 'index.sort.field': 'id', 'index.sort.order': 'asc' });
    expect(settings[`${alias}-000001`].settings).to.not.have.property('index.sort.field');
    const warned = app.logs.find((l) => l.includes('"staticSettingsChanged"'));
    expect(warned, 'the start-up warning names the settings').to.contain('"staticSettingsChanged":["sort.field","sort.order"]');

    const page = await app.admin.post('/endpoint/page-search', { criteria: {}, pageRequest: { page: 1, size: 10 } });
    expect(page.status, page.text).to.equal(200);
    const body = page.body as { totalCount: number; totalPages: number; items: { id: string }[] };
    expect(body.totalCount).to.equal(25);
    expect(body.totalPages).to.equal(3);
    expect(body.items.map((e) => e.id)).to.deep.equal([...ids].sort().slice(10, 20));
  });
});
