/**
 * A network host as a model: heartbeats and discovery reports sighting one host, and status
 * sets, through two instances (the second behind the lossy store proxy), released in orders the
 * scheduler picks. Both instances first sight the host, so each remembers a version of it that
 * the other's writes then make stale. The history must be explained by one sequential order in
 * which a sighting moves lastSeen to the later of the two times, a status set sets the status
 * and answers the host as it then is, and the host read back is the order's end state: no
 * sighting or status lost to a stale version.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, conditionalFaults, History, modelProperty, type Answer } from '../helpers/model/run.js';

const STATUSES = ['NONE', 'KNOWN', 'UNKNOWN'] as const;
type Input = { kind: 'heartbeat' | 'discovered'; lastSeen: string } | { kind: 'status'; status: (typeof STATUSES)[number] };
interface Host {
  lastSeen: string;
  status: string;
}

const at = (minute: number): string => `2024-06-01T12:${String(minute).padStart(2, '0')}:00.000Z`;
const later = (a: string, b: string): string => (Date.parse(b) > Date.parse(a) ? b : a);

const hostModel: Model<Host, Input, Answer> = {
  step(state, input, answer) {
    if (input.kind !== 'status') {
      if (answer !== undefined && answer.status !== 201 && answer.status !== 200) return undefined;
      return { ...state, lastSeen: later(state.lastSeen, input.lastSeen) };
    }
    const next = { ...state, status: input.status };
    if (answer === undefined) return next;
    const body = answer.body as Host;
    return answer.status === 200 && body.status === next.status && body.lastSeen === next.lastSeen ? next : undefined;
  },
};

const caller = fc.record({
  instance: fc.integer({ min: 0, max: 1 }),
  input: fc.oneof(
    fc.record({ kind: fc.constantFrom<'heartbeat' | 'discovered'>('heartbeat', 'discovered'), lastSeen: fc.integer({ min: 1, max: 59 }).map(at) }),
    fc.record({ kind: fc.constant<'status'>('status'), status: fc.constantFrom(...STATUSES) }),
  ),
  jitter: fc.integer({ min: 0, max: 15 }),
});

describe('network hosts as a model', () => {
  let org: string | undefined;
  modelProperty(
    'heartbeats, discovery reports and status sets on one host through two instances explain the host read back',
    fc.record({ callers: fc.array(caller, { minLength: 2, maxLength: 7 }), fault: conditionalFaults }),
    async (c, s, k) => {
      org ??= await c.apps[0].world.org(undefined, uid('model-org'));
      const ipAddress = `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const heartbeat = (i: number, lastSeen: string): ReturnType<ReturnType<typeof client>['post']> =>
        client(c, i).post('/network-heartbeat', { endpointId: uid('sensor'), orgId: org, hostAddress: ipAddress, timestamp: lastSeen });
      // Each instance sights the host once, so each holds a version of it before the run.
      for (const i of [0, 1]) expect((await heartbeat(i, at(0))).status).to.equal(201);
      const found = await client(c, 0).post<{ items: (Host & { id: string })[] }>('/network-host/search-page', { criteria: { orgId: org, ipAddress } });
      expect(found.body.items, found.text).to.have.length(1);
      const hostId = found.body.items[0].id;
      const initial: Host = { lastSeen: at(0), status: 'NONE' };

      const h = new History<Input>(s);
      arm(c.proxy, k.fault, /network-hosts\/(_bulk|_doc|_create)/);
      await h.all(
        k.callers.map(async (p, who) => {
          const api = client(c, p.instance);
          const input = p.input;
          if (input.kind === 'status') {
            const { status } = input;
            await h.op(who, input, `caller ${who} sets ${status}`, p.jitter, () => api.put(`/network-host/${hostId}/status/${status}`));
          } else if (input.kind === 'heartbeat') {
            const { lastSeen } = input;
            await h.op(who, input, `caller ${who} heartbeat at ${lastSeen}`, p.jitter, () => heartbeat(p.instance, lastSeen));
          } else {
            const { lastSeen } = input;
            await h.op(who, input, `caller ${who} reports the host at ${lastSeen}`, p.jitter, () =>
              api.post('/network-host/discovered', [{ orgId: org, ipAddress, lastSeen }]),
            );
          }
        }),
      );
      const final = await client(c, 0).get<Host>(`/network-host/${hostId}`);
      expect(final.status, final.text).to.equal(200);
      const seen: Host = { lastSeen: final.body.lastSeen, status: final.body.status };
      h.check(hostModel, initial, (m) => m.lastSeen === seen.lastSeen && m.status === seen.status, seen);
    },
  );
});
