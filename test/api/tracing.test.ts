/**
 * OpenTelemetry traces, exported to a real OTLP/HTTP receiver started here (protobuf and JSON
 * encodings, decoded and asserted): one trace per request, the server span named by its route
 * template with its attributes, the Elasticsearch client's own spans below it, group commits
 * linked to the requests they carried, jobs' batches, W3C traceparent continued, the trace id
 * in log lines and error bodies — and nothing at all exported while tracing is off.
 */
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import crypto from 'node:crypto';
import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { RUN_PREFIX, expectErrorBody, startTestApp, uid, type TestApp } from '../helpers/app.js';
import { P } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import {
  SPAN_KIND,
  STATUS_ERROR,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import { aliasName } from '../../src/store/client.js';

type Bulk = (req: estypes.BulkRequest, opts?: unknown) => Promise<estypes.BulkResponse>;

/** The app that runs a job: an index prefix of its own keeps other instances from taking it. */
const PREFIX = `${RUN_PREFIX}-ztrace`;

/** The spans of one trace, once its server span (and everything under it) has arrived. */
async function traceOf(receiver: OtlpReceiver, traceId: string, atLeast = 2): Promise<ReceivedSpan[]> {
  const w = await waitFor(
    async () => receiver.spans.filter((s) => s.traceId === traceId),
    (spans) => spans.some((s) => s.kind === SPAN_KIND.SERVER) && spans.length >= atLeast,
    15_000,
  );
  expect(w.met, `trace ${traceId}: ${JSON.stringify(w.value.map((s) => s.name))}`).to.equal(true);
  return w.value;
}

/** The trace id a request's log lines carry (its access-log line names its request id). */
function loggedTraceIds(t: TestApp, requestId: string): string[] {
  return t.logs
    .map((l) => JSON.parse(l) as { requestId?: string; traceId?: string })
    .filter((l) => l.requestId === requestId)
    .map((l) => l.traceId ?? 'none');
}

/** The span and every ancestor up to the root, by parent ids. */
function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  let at: ReceivedSpan | undefined = span;
  while (at && at.parentSpanId !== '') {
    at = spans.find((s) => s.spanId === at?.parentSpanId);
    if (at) chain.push(at);
  }
  return chain;
}

describe('OpenTelemetry traces', () => {
  describe('on, OTLP/HTTP protobuf', () => {
    let receiver: OtlpReceiver;
    let t: TestApp;
    let org: string;

    before(async function () {
      // An index prefix of its own to set up (a minute or two on a busy node).
      this.timeout(300_000);
      receiver = await startOtlpReceiver();
      t = await startTestApp({
        ECS_INDEX_PREFIX: PREFIX,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'ecs-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        ECS_JOB_BATCH_SIZE: '2',
        ECS_JOB_POLL_MS: '100',
      });
      org = await t.world.org();
    });
    after(async () => {
      await t?.close();
      await receiver?.close();
    });
    afterEach(() => expect(receiver.errors).to.deep.equal([]));

    it('makes one trace per request: a server span named by its route template, with route, status, organization and lane, over the Elasticsearch client spans', async () => {
      const reader = t.world.as(await t.world.token('reader', org));
      const ep = await t.world.endpoint(org);
      const res = await reader.get(`/endpoint/${ep.id}`);
      expect(res.status, res.text).to.equal(200);
      const requestId = res.headers.get('x-request-id') ?? '';
      const [traceId] = loggedTraceIds(t, requestId);
      expect(traceId).to.match(/^[0-9a-f]{32}$/);

      const spans = await traceOf(receiver, traceId, 3);
      const servers = spans.filter((s) => s.kind === SPAN_KIND.SERVER);
      expect(servers, 'one server span in the trace').to.have.length(1);
      const server = servers[0];
      expect(server.encoding).to.equal('protobuf');
      expect(server.parentSpanId).to.equal('');
      expect(server.name).to.equal(`GET ${P}/endpoint/:id`);
      expect(server.attributes).to.deep.include({
        'http.request.method': 'GET',
        'http.route': `${P}/endpoint/:id`,
        'http.response.status_code': 200,
        'endpoint_control.org_id': org,
        'endpoint_control.lane': 'agent',
        'endpoint_control.operation': 'getEndpoint',
        'client.address': '127.0.0.1',
      });
      expect(server.resource).to.deep.include({ 'service.name': 'ecs-under-test', 'deployment.environment': 'test' });

      // The read went out through the coalescing reader: its span under the request, the client's mget under it.
      const es = spans.filter((s) => s.kind === SPAN_KIND.CLIENT);
      expect(es.length, JSON.stringify(spans.map((s) => s.name))).to.be.greaterThan(0);
      for (const c of es) {
        expect(c.scope).to.equal('@elastic/transport');
        expect(c.attributes['db.system']).to.equal('elasticsearch');
        expect(ancestors(spans, c).at(-1)?.spanId, `${c.name} descends from the server span`).to.equal(server.spanId);
      }
      // The endpoint's read (and a token seen for the first time, its own coalesced read of the tokens).
      const mgetParents = es.filter((s) => s.name === 'mget').map((m) => spans.find((s) => s.spanId === m.parentSpanId)?.name);
      expect(mgetParents).to.include('coalesced mget endpoints');
      // Every span of the trace hangs off the one server span.
      for (const s of spans.filter((x) => x !== server))
        expect(ancestors(spans, s).at(-1)?.spanId).to.equal(server.spanId);
    });

    it("continues the caller's W3C traceparent", async () => {
      const traceId = crypto.randomBytes(16).toString('hex');
      const parent = crypto.randomBytes(8).toString('hex');
      const res = await t.admin.request('GET', `/org-config/${org}`, {
        headers: { traceparent: `00-${traceId}-${parent}-01` },
      });
      expect(res.status).to.be.oneOf([200, 404]);
      const spans = await traceOf(receiver, traceId, 1);
      const server = spans.find((s) => s.kind === SPAN_KIND.SERVER) as ReceivedSpan;
      expect(server.parentSpanId).to.equal(parent);
      expect(loggedTraceIds(t, res.headers.get('x-request-id') ?? '')).to.deep.equal([traceId]);
    });

    it('puts the trace id beside the request id in an error body and in every log line of the request', async () => {
      const missing = uid('missing');
      const res = await t.admin.get(`/endpoint/${missing}`);
      expectErrorBody(res, 404, `${P}/endpoint/${missing}`);
      const body = res.body as { requestId?: string; traceId?: string };
      expect(body.requestId).to.equal(res.headers.get('x-request-id'));
      expect(body.traceId).to.match(/^[0-9a-f]{32}$/);
      const lines = loggedTraceIds(t, body.requestId ?? '');
      expect(lines.length).to.be.greaterThan(0);
      for (const id of lines) expect(id).to.equal(body.traceId);
      const server = (await traceOf(receiver, body.traceId ?? '', 1)).find(
        (s) => s.kind === SPAN_KIND.SERVER,
      ) as ReceivedSpan;
      expect(server.attributes['http.response.status_code']).to.equal(404);
      // A 4xx is the caller's failure, not the server's: the span's status stays unset.
      expect(server.statusCode).to.not.equal(STATUS_ERROR);
    });

    it('runs a group commit in one span linked to the requests it carried, with the bulk below it', async () => {
      const eps = await Promise.all(Array.from({ length: 6 }, () => t.world.endpoint(org)));
      const endpoints = aliasName(t.server.store.prefix, 'endpoints');
      const client = t.server.store.client as unknown as { bulk: Bulk };
      const realBulk = client.bulk.bind(client);
      let held = 0;
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      // The first bulk is held so the connects arriving meanwhile queue and leave together.
      client.bulk = async (req, opts) => {
        if (req.index === endpoints) {
          held += 1;
          await gate;
        }
        return realBulk(req, opts);
      };
      let arrived = 0;
      const onRequest = (m: unknown): void => {
        if (/\/connect$/.test((m as { request: IncomingMessage }).request.url ?? '')) arrived += 1;
      };
      diagnostics.subscribe('http.server.request.start', onRequest);
      let answers;
      try {
        const pending = eps.map((e) => t.admin.post(`/endpoint/${e.id}/connect`));
        const queued = await waitFor(
          async () => ({ arrived, held }),
          (v) => v.arrived === eps.length && v.held === 1,
          10_000,
        );
        expect(queued.met, JSON.stringify(queued.value)).to.equal(true);
        await new Promise((r) => setImmediate(r));
        open();
        answers = await Promise.all(pending);
      } finally {
        diagnostics.unsubscribe('http.server.request.start', onRequest);
        client.bulk = realBulk;
      }
      for (const a of answers) expect(a.status, a.text).to.equal(204);

      const traceIds = answers.map((a) => loggedTraceIds(t, a.headers.get('x-request-id') ?? '')[0]);
      const servers = await Promise.all(
        traceIds.map(
          async (id) => (await traceOf(receiver, id, 1)).find((s) => s.kind === SPAN_KIND.SERVER) as ReceivedSpan,
        ),
      );
      const commits = await waitFor(
        async () =>
          receiver.spans.filter(
            (s) =>
              s.name === 'group commit endpoints' &&
              (servers.some((v) => v.traceId === s.traceId) || s.links.some((l) => traceIds.includes(l.traceId))),
          ),
        (found) => found.reduce((n, s) => n + Math.max(1, s.links.length), 0) >= eps.length,
        15_000,
      );
      expect(commits.met, JSON.stringify(commits.value)).to.equal(true);
      // Every connect is carried by a group commit: its child when alone, linked when shared.
      for (const server of servers) {
        const carried = commits.value.some(
          (c) =>
            c.parentSpanId === server.spanId ||
            c.links.some((l) => l.spanId === server.spanId && l.traceId === server.traceId),
        );
        expect(carried, `connect ${server.traceId} carried by a group commit`).to.equal(true);
      }
      const shared = commits.value.find((c) => c.links.length > 1);
      expect(shared, 'a group commit that carried several connects').to.not.equal(undefined);
      const commit = shared as ReceivedSpan;
      expect(commit.parentSpanId, 'a shared commit starts a trace of its own').to.equal('');
      expect(commit.attributes['endpoint_control.batch.size']).to.equal(commit.links.length);
      const bulk = await waitFor(
        async () =>
          receiver.spans.find((s) => s.traceId === commit.traceId && s.kind === SPAN_KIND.CLIENT && s.name === 'bulk'),
        (s) => s !== undefined,
        15_000,
      );
      expect(bulk.value?.parentSpanId).to.equal(commit.spanId);
    });

    it("traces each of a job's batches, with the store calls it made below it", async () => {
      const tag = uid('traced');
      await Promise.all(
        Array.from({ length: 3 }, (_, i) => t.world.endpoint(org, { displayName: `${tag} agent-${i}` })),
      );
      const created = await t.admin.post<{ id: string }>('/jobs', {
        action: { type: 'ENABLE_MODULE', module: 'fim' },
        criteria: { orgId: org, basic: tag },
      });
      expect(created.status, created.text).to.equal(202);
      const done = await waitFor(
        () => t.admin.get<{ finishedAt?: string; done: number }>(`/jobs/${created.body.id}`),
        (r) => r.body.finishedAt !== undefined,
        60_000,
        50,
      );
      expect(done.value.body.done).to.equal(3);
      const batches = await waitFor(
        async () =>
          receiver.spans.filter(
            (s) => s.name === 'job batch' && s.attributes['endpoint_control.job.id'] === created.body.id,
          ),
        (found) => found.length >= 2,
        15_000,
      );
      expect(batches.met, 'two batches of two and one').to.equal(true);
      expect(batches.value.map((b) => b.attributes['endpoint_control.batch.size']).sort()).to.deep.equal([1, 2]);
      for (const b of batches.value) {
        expect(b.parentSpanId).to.equal('');
        expect(b.attributes).to.deep.include({
          'endpoint_control.job.action': 'ENABLE_MODULE',
          'endpoint_control.batch.outcome': 'complete',
        });
      }
      const below = await waitFor(
        async () =>
          receiver.spans.filter(
            (s) => s.kind === SPAN_KIND.CLIENT && batches.value.some((b) => b.traceId === s.traceId),
          ),
        (found) => found.length >= 2,
        15_000,
      );
      expect(below.met).to.equal(true);
    });
  });

  describe('on, OTLP/HTTP JSON, sampled at a ratio, logs in ECS', () => {
    let receiver: OtlpReceiver;
    let t: TestApp;

    before(async function () {
      this.timeout(300_000);
      receiver = await startOtlpReceiver();
      t = await startTestApp({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.5',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        ECS_LOG_FORMAT: 'ecs',
      });
    });
    after(async () => {
      await t?.close();
      await receiver?.close();
    });

    it("sends the same trace as JSON, and follows the caller's sampling decision", async () => {
      const sampled = crypto.randomBytes(16).toString('hex');
      const dropped = crypto.randomBytes(16).toString('hex');
      const parent = crypto.randomBytes(8).toString('hex');
      const org = await t.world.org();
      expect(
        (await t.admin.request('GET', `/org-config/${org}`, { headers: { traceparent: `00-${dropped}-${parent}-00` } }))
          .status,
      ).to.be.below(500);
      const traced = await t.admin.request('GET', `/org-config/${org}`, {
        headers: { traceparent: `00-${sampled}-${parent}-01` },
      });
      expect(traced.status).to.be.below(500);
      const spans = await traceOf(receiver, sampled, 2);
      expect(receiver.requests.every((r) => r.startsWith('application/json'))).to.equal(true);
      const server = spans.find((s) => s.kind === SPAN_KIND.SERVER) as ReceivedSpan;
      expect(server.encoding).to.equal('json');
      expect(server.name).to.equal(`GET ${P}/org-config/:orgId`);
      expect(server.parentSpanId).to.equal(parent);
      for (const c of spans.filter((s) => s.kind === SPAN_KIND.CLIENT))
        expect(ancestors(spans, c).at(-1)?.spanId).to.equal(server.spanId);
      // Its log lines, in the Elastic Common Schema here, name the trace and the server span.
      const lines = t.logs
        .map(
          (l) =>
            JSON.parse(l) as {
              requestId?: string;
              message?: string;
              trace?: { id?: string };
              span?: { id?: string };
              '@timestamp'?: string;
            },
        )
        .filter((l) => l.requestId === traced.headers.get('x-request-id'));
      expect(lines.length).to.be.greaterThan(0);
      for (const l of lines) {
        expect(l.trace?.id).to.equal(sampled);
        expect(l['@timestamp']).to.be.a('string');
      }
      expect(lines.find((l) => l.message === 'request')?.span?.id).to.equal(server.spanId);
      // Not sampled by the caller: nothing of that trace is sent (its log lines still name it).
      await t.server.tracing.flush();
      expect(receiver.spans.filter((s) => s.traceId === dropped)).to.deep.equal([]);
      expect(receiver.errors).to.deep.equal([]);
    });
  });

  describe('off: OTEL_SDK_DISABLED beside an endpoint', () => {
    it('exports nothing, and neither log lines nor error bodies carry a trace id', async function () {
      this.timeout(300_000);
      const receiver = await startOtlpReceiver();
      const t = await startTestApp({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SDK_DISABLED: 'true',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      });
      try {
        const org = await t.world.org();
        const ep = await t.world.endpoint(org);
        expect((await t.admin.post(`/endpoint/${ep.id}/connect`)).status).to.equal(204);
        const res = await t.admin.get(`/endpoint/${uid('missing')}`);
        expectErrorBody(res, 404);
        const body = res.body as { requestId?: string; traceId?: string };
        expect(body.requestId).to.equal(res.headers.get('x-request-id'));
        expect(body).to.not.have.property('traceId');
        const lines = loggedTraceIds(t, body.requestId ?? '');
        expect(lines.length).to.be.greaterThan(0);
        expect(
          lines.every((l) => l === 'none'),
          JSON.stringify(lines),
        ).to.equal(true);
      } finally {
        await t.close();
      }
      // Closed: whatever a provider had buffered would have been sent by now.
      expect(receiver.requests).to.deep.equal([]);
      await receiver.close();
    });
  });
});
