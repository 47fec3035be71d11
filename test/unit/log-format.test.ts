/**
 * Log lines in both formats (ECS_LOG_FORMAT): pino's JSON and the Elastic Common Schema, with
 * tokens, cookies and credentials redacted in either, wherever a line carries them.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { accessLineOf, createLogger, type AccessFields } from '../../src/log.js';
import { loadConfig } from '../../src/config.js';
import type { LogFormat } from '../../src/log.js';

function capture(format: LogFormat): {
  lines: Record<string, unknown>[];
  text: () => string;
  log: ReturnType<typeof createLogger>;
} {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      raw.push(chunk.toString());
      cb();
    },
  });
  const log = createLogger('info', sink, format);
  return {
    log,
    text: () => raw.join(''),
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

const SECRETS = ['ecs_tok3n-value', 'sid=s3ssion', 'Bearer b3arer', 'Basic YmFzaWM=', 'sid=n3w', 'sh4red-secret'];

function logSecrets(log: ReturnType<typeof createLogger>): void {
  const child = log.child({ requestId: 'r-1' });
  child.info(
    { token: SECRETS[0], headers: { 'x-auth-token': SECRETS[0], cookie: SECRETS[1], authorization: SECRETS[2] } },
    'inbound',
  );
  child.warn(
    {
      req: { headers: { cookie: SECRETS[1], 'proxy-authorization': SECRETS[3] } },
      res: { headers: { 'set-cookie': SECRETS[4] } },
    },
    'exchange',
  );
  child.info({ created: { token: SECRETS[0], secret: SECRETS[5] }, cookie: SECRETS[1] }, 'minted');
}

describe('log format', () => {
  it('defaults to pino JSON and accepts only json or ecs', () => {
    expect(loadConfig({}).logFormat).to.equal('json');
    expect(loadConfig({ ECS_LOG_FORMAT: 'ecs' }).logFormat).to.equal('ecs');
    expect(() => loadConfig({ ECS_LOG_FORMAT: 'gelf' })).to.throw(/ECS_LOG_FORMAT/);
  });

  for (const format of ['json', 'ecs'] as const) {
    it(`${format}: redacts tokens, cookies and credentials in every place a line may carry them`, () => {
      const c = capture(format);
      logSecrets(c.log);
      const text = c.text();
      for (const s of SECRETS) expect(text, `${s} leaked`).to.not.contain(s);
      expect(c.lines).to.have.length(3);
      expect(text.match(/\[redacted\]/g)?.length).to.equal(10);
    });
  }

  it('json: pino fields, the service named, the request id kept', () => {
    const c = capture('json');
    c.log.child({ requestId: 'r-2' }).info({ status: 200 }, 'request');
    const [line] = c.lines;
    expect(line).to.include({
      level: 30,
      msg: 'request',
      service: 'endpoint-control-service',
      requestId: 'r-2',
      status: 200,
    });
    expect(Number.isNaN(Date.parse(line.time as string))).to.equal(false);
  });

  for (const format of ['json', 'ecs'] as const) {
    it(`${format}: lines outside a trace carry their own fields only, none of an earlier line's`, () => {
      const c = capture(format);
      const first = { requestId: 'r-4', status: 201 };
      c.log.info(first, 'request');
      c.log.info({ requestId: 'r-5' }, 'request');
      const [a, b] = c.lines;
      expect(a).to.include({ requestId: 'r-4', status: 201 });
      expect(b).to.include({ requestId: 'r-5' }).and.not.have.any.keys('status', 'trace', 'traceId');
      expect(first).to.deep.equal({ requestId: 'r-4', status: 201 });
    });
  }

  for (const format of ['json', 'ecs'] as const) {
    it(`${format}: the access line is pino's own line for its fields, key for key and in order`, () => {
      const fields: AccessFields[] = [
        { requestId: 'r-6', method: 'GET', route: '/v1/x', path: '/v1/x', status: 200, durationMs: 1.5, clientAddress: '127.0.0.1', role: 'anonymous' },
        { requestId: 'r-7', method: 'POST', route: '/v1/"q"', path: '/v1/\\é\u2028', status: 503, durationMs: 0, clientAddress: '::1', tokenId: 't-1', role: 'admin' },
      ];
      const fast = capture(format);
      const slow = capture(format);
      for (const f of fields) {
        accessLineOf(fast.log)(f);
        slow.log.info(f, 'request');
      }
      const untimed = (l: Record<string, unknown>) => Object.entries(l).filter(([k]) => k !== 'time' && k !== '@timestamp');
      expect(fast.lines.map(untimed)).to.deep.equal(slow.lines.map(untimed));
      expect(fast.text().split('\n')).to.have.length(3);
      for (const l of fast.lines) expect(Math.abs(Date.parse(String(l.time ?? l['@timestamp'])) - Date.now())).to.be.below(60_000);
      expect(fast.lines[0]).to.not.have.property('tokenId');
    });
  }

  it('writes no access line below its level', () => {
    const raw: string[] = [];
    const log = createLogger('warn', new Writable({ write: (chunk: Buffer, _enc, cb) => (raw.push(chunk.toString()), cb()) }), 'json');
    accessLineOf(log)({ requestId: 'r-8', method: 'GET', route: '/', path: '/', status: 200, durationMs: 1, clientAddress: '127.0.0.1' });
    log.warn('kept');
    expect(raw).to.have.length(1);
    expect(raw[0]).to.contain('kept');
  });

  it('ecs: the Elastic Common Schema fields Filebeat and Kibana expect', () => {
    const c = capture('ecs');
    c.log.child({ requestId: 'r-3' }).error({ err: new Error('boom') }, 'request');
    const [line] = c.lines;
    expect(line).to.include({ message: 'request', 'log.level': 'error', requestId: 'r-3' });
    expect(line['ecs.version']).to.be.a('string');
    expect(Number.isNaN(Date.parse(line['@timestamp'] as string))).to.equal(false);
    expect(line['service.name'] ?? (line.service as { name?: string } | undefined)?.name).to.equal(
      'endpoint-control-service',
    );
    const error = (line.error ?? {}) as { message?: string; type?: string; stack_trace?: string };
    expect(error.message).to.equal('boom');
    expect(error.type).to.equal('Error');
    expect(line).to.not.have.property('msg');
    expect(line).to.not.have.property('level');
  });
});
