import { expect } from 'chai';
import { RUN_PREFIX, startTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { buildStockedOrg } from '../helpers/stocked-org.js';
import { fuzz } from '../fuzz/fuzz.js';

describe('fuzzing every operation from the OpenAPI document (bounded; `npm run fuzz` runs many more)', () => {
  let t: TestApp;
  before(async () => {
    // Its own indices: fuzzed writes must not disturb other tests' data.
    t = await startTestApp({ ECS_INDEX_PREFIX: `${RUN_PREFIX}-fuzz` });
  });
  after(() => t.close());

  it('no 5xx, section-7 errors, conforming responses, no 400 to a request the document accepts, and the process stays up', async function () {
    this.timeout(600_000);
    // Real records for path parameters (one case in three names one), and an org-scoped admin token.
    const fixture = await buildStockedOrg(t);
    const runs = Number(process.env.FUZZ_RUNS ?? 12);
    const stats = await fuzz(
      { url: t.url, openapi: t.server.handle.openapi, tokens: { system: ADMIN_TOKEN, scoped: fixture.tokens.admin }, known: fixture.params },
      runs,
      42,
    );
    const failures = stats.flatMap((s) => s.failures);
    expect(stats.length).to.equal(t.server.handle.routes.length);
    expect(stats.every((s) => s.cases === runs)).to.equal(true);
    expect(failures, failures.slice(0, 20).join('\n')).to.deep.equal([]);
    // The cases reached the operations' success paths, not only their refusals.
    expect(stats.filter((s) => Object.keys(s.byStatus).some((k) => k.startsWith('2'))).length).to.be.greaterThan(stats.length / 2);
    expect((await t.anon.get('/health/live')).status).to.equal(200);
  });
});
