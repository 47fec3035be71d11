/**
 * One endpoint's software inventory as a model: full reports drawn from a few fixed ones, and
 * single entries added, moved and removed, through two instances (the second behind the lossy
 * store proxy, its faults on the digests' writes or on the entries' bulk writes), released in
 * orders the scheduler picks.
 * Concurrent full reports may interleave their entries, so the property is what an agent relies
 * on: once every write has answered, each report of the pool sent again leaves exactly its own
 * entries. A report the endpoint's digest claimed it already had, while another write had
 * changed the entries, would leave those changes standing.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import { arm, client, faults, History, modelProperty } from '../helpers/model/run.js';

const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'] as const;
const VERSIONS = ['1', '2'] as const;
interface Item {
  name: string;
  version: string;
}
type Input = { kind: 'report'; report: number } | { kind: 'add' | 'remove'; item: Item } | { kind: 'move'; name: string; from: string; to: string };

const item = fc.record({ name: fc.constantFrom(...NAMES), version: fc.constantFrom(...VERSIONS) });
/** A report: distinct names, one version each. */
const report = fc.subarray([...NAMES], { minLength: 1 }).chain((names) =>
  fc.tuple(...names.map((name) => fc.constantFrom(...VERSIONS).map((version) => ({ name, version })))),
);
const caller = fc.record({
  instance: fc.integer({ min: 0, max: 1 }),
  input: fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant<'report'>('report'), report: fc.integer({ min: 0, max: 2 }) }) },
    fc.record({ kind: fc.constantFrom<'add' | 'remove'>('add', 'remove'), item }),
    fc.record({ kind: fc.constant<'move'>('move'), name: fc.constantFrom(...NAMES), from: fc.constantFrom(...VERSIONS), to: fc.constantFrom(...VERSIONS) }),
  ),
  jitter: fc.integer({ min: 0, max: 15 }),
});

const keys = (items: readonly Item[]): string[] => items.map((i) => `${i.name}@${i.version}`).sort();

describe('software inventory as a model', () => {
  let org: string | undefined;
  modelProperty(
    'full reports and single-entry changes on one endpoint through two instances: a report sent after them leaves exactly its entries',
    fc.record({
      reports: fc.tuple(report, report, report),
      callers: fc.array(caller, { minLength: 2, maxLength: 8 }),
      fault: faults,
      faultOn: fc.constantFrom<'digests' | 'entries'>('digests', 'entries'),
    }),
    async (c, s, k) => {
      org ??= await c.apps[0].world.org(undefined, uid('model-org'));
      const endpoint = (await c.apps[0].world.endpoint(org)).id;
      const inv = `/endpoint/${endpoint}/software-inventory`;
      // The pool's first report is stored once before the run, so its digest is held from the start.
      expect((await client(c, 0).post(inv, k.reports[0])).status).to.equal(201);

      const h = new History<Input>(s);
      arm(c.proxy, k.fault, k.faultOn === 'digests' ? /inventory-digests\/_doc/ : /software-inventory\/_bulk/);
      await h.all(
        k.callers.map(async (p, who) => {
          const api = client(c, p.instance);
          const input = p.input;
          if (input.kind === 'report') {
            await h.op(who, input, `caller ${who} reports #${input.report}`, p.jitter, () => api.post(inv, k.reports[input.report]));
          } else if (input.kind !== 'move') {
            const { name, version } = input.item;
            await h.op(who, input, `caller ${who} ${input.kind}s ${name}@${version}`, p.jitter, () =>
              input.kind === 'add' ? api.post(`${inv}/${name}`, { version }) : api.delete(`${inv}/${name}`, { body: { version } }),
            );
          } else {
            const { name, from, to } = input;
            await h.op(who, input, `caller ${who} moves ${name} ${from}→${to}`, p.jitter, () => api.put(`${inv}/${name}`, { version: to, previousVersion: from }));
          }
        }),
      );
      // First the report answered last (the digest most likely held), then each of the pool, through the
      // instance that talks to the store directly: a fault the run did not meet stays armed on the other.
      const answered = h.ops.filter((op) => op.input.kind === 'report' && op.answer?.status === 201).sort((a, b) => b.answeredAt - a.answeredAt);
      const last = answered[0]?.input.kind === 'report' ? answered[0].input.report : 0;
      for (const n of [last, 0, 1, 2]) {
        const res = await client(c, 0).post(inv, k.reports[n]);
        expect(res.status, `report #${n} again: ${res.text}`).to.equal(201);
        const stored = await client(c, 0).get<Item[]>(inv);
        expect(keys(stored.body), `after report #${n} again`).to.deep.equal(keys(k.reports[n]));
      }
    },
  );
});
