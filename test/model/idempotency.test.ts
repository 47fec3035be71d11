/**
 * Idempotency-Key replays under concurrency, as a model: callers on both instances send creates
 * under one key, most with the same body, some with another. The first request to claim the key
 * decides: the same request answers the same record (one record in all), another body is 409. A
 * caller whose answer was lost repeats with its key and gets the first outcome.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid, type EndpointRecord } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, faults, History, modelProperty, type Answer } from '../helpers/model/run.js';
import { waitFor } from '../helpers/wait.js';

interface Claimed {
  /** The body that claimed the key and the record it created ('' when its answer was lost). */
  body?: number;
  id: string;
}

const keyModel: Model<Claimed, { body: number }, Answer> = {
  step(s, { body }, answer) {
    if (s.body === undefined) {
      if (answer === undefined) return { body, id: '' };
      return answer.status === 200 ? { body, id: (answer.body as EndpointRecord).id } : undefined;
    }
    if (body !== s.body) return answer === undefined || answer.status === 409 ? s : undefined;
    if (answer === undefined) return s;
    const id = (answer.body as EndpointRecord).id;
    return answer.status === 200 && (s.id === '' || s.id === id) ? { body: s.body, id } : undefined;
  },
};

describe('model: Idempotency-Key replays under concurrency', () => {
  modelProperty(
    'creates under one key through two instances: one record, every answer the first outcome or 409 for another body',
    fc.record({
      callers: fc.array(fc.record({ instance: fc.integer({ min: 0, max: 1 }), body: fc.integer({ min: 0, max: 3 }), jitter: fc.integer({ min: 0, max: 15 }) }), { minLength: 2, maxLength: 6 }),
      fault: faults,
    }),
    async (c, s, k) => {
      const a = c.apps[0];
      const org = await a.world.org(undefined, uid('model-org'));
      const key = uid('idem-key');
      // Bodies 0-2 are one request; body 3 is another under the same key.
      const bodyOf = (n: number): { orgId: string; displayName: string } => ({ orgId: org, displayName: n === 3 ? 'another' : 'the agent' });
      const h = new History<{ body: number }>(s);
      arm(c.proxy, k.fault, /^PUT \/[^/]*-(endpoints|idempotency-keys)\/_(doc|create)\//);
      await h.all(
        k.callers.map(async (p, who) => {
          const b = p.body === 3 ? 3 : 0;
          const send = (): ReturnType<ReturnType<typeof client>['post']> => client(c, p.instance).post('/endpoint', bodyOf(b), { headers: { 'Idempotency-Key': key } });
          const op = await h.op(who, { body: b }, `caller ${who} creates (body ${b})`, p.jitter, send);
          if (op.answer === undefined) await h.repeat(op, `caller ${who} repeats its create`, send);
        }),
      );
      const claimed = h.check(keyModel, { id: '' }, () => true, 'claimed');
      const count = async (): Promise<number> => {
        const res = await a.admin.post<{ totalCount: number }>('/endpoint/page-search', { criteria: { orgId: org }, pageRequest: { size: 1 } });
        expect(res.status, res.text).to.equal(200);
        return res.body.totalCount;
      };
      // One record (none only if every create under the key lost its answer and was never repeated).
      const one = await waitFor(count, (n) => n === 1, 5_000);
      expect(one.value, 'records created under one key').to.equal(claimed.body === undefined ? 0 : 1);
      if (claimed.id !== '') expect((await a.admin.get<EndpointRecord>(`/endpoint/${claimed.id}`)).body.displayName).to.equal(bodyOf(claimed.body ?? 0).displayName);
    },
  );
});
