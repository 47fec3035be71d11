/**
 * State machines under concurrent moves, as a model: license states and command-message
 * statuses moved by callers on two instances (one behind the lossy store proxy). Each history
 * must be one path through the product's transition table: a move the table allows from the
 * state reached is 200, any other 409 — so SENT is told to one caller only. A caller whose
 * answer was lost repeats its move with its Idempotency-Key and gets the outcome of its move;
 * a command message that ends SENT carries its delivery record.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, conditionalFaults, faults, History, modelCluster, modelProperty, type Answer, type Fault, type ModelCluster } from '../helpers/model/run.js';
import { LICENSE_STATES, LICENSE_TRANSITIONS, type LicenseState } from '../../src/resources/licenses/model.js';
import { COMMAND_MESSAGE_STATUSES, COMMAND_MESSAGE_TRANSITIONS } from '../../src/resources/commands/status.js';
import type { CommandMessageStatus } from '../../src/resources/commands/model.js';

interface Machine {
  at: string;
  /** Successful moves so far (a license's version counts them; a message's RETRY moves count retries). */
  moves: number;
  retries: number;
}

interface Move {
  to: string;
  /** Sent with the version read at the start: only a move from the first state may win. */
  versioned: boolean;
}

/**
 * The sequential model of one state machine: `field` names the state in the answer's body;
 * `versionBase`, when given, is the version before the first move (each move adds one).
 */
function machine(table: Readonly<Record<string, readonly string[]>>, field: 'state' | 'status', versionBase?: number): Model<Machine, Move, Answer> {
  return {
    step(s, m, answer) {
      const wins = table[s.at].includes(m.to) && (!m.versioned || s.moves === 0);
      if (!wins) return answer === undefined || answer.status === 409 ? s : undefined;
      const next = { at: m.to, moves: s.moves + 1, retries: s.retries + (m.to === 'RETRY' ? 1 : 0) };
      if (answer === undefined) return next;
      const body = answer.body as Record<string, unknown>;
      if (answer.status !== 200 || body[field] !== m.to) return undefined;
      if (versionBase !== undefined && body.version !== next.moves + versionBase) return undefined;
      if (versionBase === undefined && m.to === 'RETRY' && body.retries !== next.retries) return undefined;
      return next;
    },
  };
}

interface Caller {
  instance: number;
  to: string;
  jitter: number;
  keyed: boolean;
  versioned: boolean;
  /** Repeats its move with its key even when the first answer arrived. */
  repeats: boolean;
}

const callerOf = (targets: fc.Arbitrary<string>): fc.Arbitrary<Caller> =>
  fc.record({
    instance: fc.integer({ min: 0, max: 1 }),
    to: targets,
    jitter: fc.integer({ min: 0, max: 15 }),
    keyed: fc.boolean(),
    versioned: fc.boolean(),
    repeats: fc.boolean(),
  });

describe('model: state machines under concurrent moves', () => {
  let org: string | undefined;
  const orgOnce = async (): Promise<string> => (org ??= await (await modelCluster()).apps[0].world.org(undefined, uid('model-org')));

  modelProperty(
    'license state moves through two instances follow the license state machine, one move per version',
    fc.record({
      // Starting CREATED or ACTIVATED; targets weighted towards the moves the table has.
      activated: fc.boolean(),
      callers: fc.array(
        callerOf(fc.oneof({ arbitrary: fc.constantFrom<string>('ACTIVATED', 'DEACTIVATED', 'REVOKED'), weight: 3 }, { arbitrary: fc.constantFrom<string>(...LICENSE_STATES), weight: 1 })),
        { minLength: 2, maxLength: 6 },
      ),
      fault: conditionalFaults,
    }),
    async (c, s, k) => {
      const id = uid('lic');
      let created = await c.apps[0].admin.put<{ state: LicenseState; version: number }>(`/license/${id}`, { type: 'ATC', orgId: await orgOnce() });
      expect(created.status, created.text).to.equal(200);
      if (k.activated) {
        created = await c.apps[0].admin.patch<{ state: LicenseState; version: number }>(`/license/${id}/state/ACTIVATED`);
        expect(created.status, created.text).to.equal(200);
      }
      const h = new History<Move>(s);
      arm(c.proxy, k.fault, /^PUT \/[^/]*-licenses\/_doc\//);
      await h.all(
        k.callers.map(async (p, who) => {
          // A license move carries no version and no key: a caller whose answer was lost reads the license instead.
          await h.op(who, { to: p.to, versioned: false }, `caller ${who} moves to ${p.to}`, p.jitter, () => client(c, p.instance).patch(`/license/${id}/state/${p.to}`));
        }),
      );
      const final = (await c.apps[0].admin.get<{ state: string; version: number }>(`/license/${id}`)).body;
      h.check(
        machine(LICENSE_TRANSITIONS, 'state', created.body.version),
        { at: created.body.state, moves: 0, retries: 0 },
        (m) => m.at === final.state && m.moves + created.body.version === final.version,
        final,
      );
    },
  );

  /** One run of command-message moves: the callers' moves, their keyed repeats, the history and the delivery record checked. */
  async function commandMoves(c: ModelCluster, s: fc.Scheduler, k: { callers: Caller[]; fault: Fault }): Promise<void> {
    const a = c.apps[0];
    const ep = await a.world.endpoint(await orgOnce());
    const m = await a.admin.post<{ id: string; uuid: string; status: CommandMessageStatus; version: unknown }>(`/command-message/endpoint/${ep.id}`, { module: 'cmd', name: 'ping' });
    expect(m.status, m.text).to.equal(201);
    const h = new History<Move>(s);
    let unkeyedLost = false;
    arm(c.proxy, k.fault, /^POST \/[^/]*-command-messages\/_update\//);
    await h.all(
      k.callers.map(async (p, who) => {
        const api = client(c, p.instance);
        const key = uid('move-key');
        const move = (): ReturnType<typeof api.patch> =>
          api.patch(`/command-message/${m.body.id}/status/${p.to}`, p.versioned ? { version: m.body.version } : undefined, p.keyed ? { headers: { 'Idempotency-Key': key } } : {});
        const op = await h.op(who, { to: p.to, versioned: p.versioned }, `caller ${who} moves to ${p.to}${p.keyed ? ' (keyed)' : ''}`, p.jitter, move);
        if (p.keyed && (op.answer === undefined || p.repeats)) await h.repeat(op, `caller ${who} repeats its move to ${p.to}`, move);
        if (!p.keyed && op.answer === undefined && p.to === 'SENT') unkeyedLost = true;
      }),
    );
    const final = (await a.admin.get<{ status: string; retries?: number }>(`/command-message/${m.body.id}`)).body;
    h.check(
      machine(COMMAND_MESSAGE_TRANSITIONS, 'status'),
      { at: m.body.status, moves: 0, retries: 0 },
      (st) => st.at === final.status && st.retries === (final.retries ?? 0),
      final,
    );
    const delivery = await a.admin.get<{ status: string }>(`/command-message/delivery/${m.body.uuid}`);
    if (final.status === 'SENT' && !unkeyedLost) {
      expect(delivery.status, `a SENT message without its delivery record: ${delivery.text}`).to.equal(200);
      expect(delivery.body.status).to.equal('DELIVERED');
    }
    if (final.status !== 'SENT') expect(delivery.status, 'a delivery record for a message never SENT').to.equal(404);
  }

  const targets = fc.oneof({ arbitrary: fc.constant<string>('SENT'), weight: 3 }, { arbitrary: fc.constantFrom<string>(...COMMAND_MESSAGE_STATUSES), weight: 2 });
  modelProperty(
    'command-message moves through two instances follow the status machine: SENT told to one caller, delivered once',
    fc.record({ callers: fc.array(callerOf(targets), { minLength: 2, maxLength: 8 }), fault: faults }),
    commandMoves,
  );
  modelProperty(
    'ten callers move one CREATED command message to SENT at once through two instances: one 200, nine 409',
    fc.record({ callers: fc.array(callerOf(fc.constant('SENT')), { minLength: 10, maxLength: 10 }), fault: faults }),
    commandMoves,
  );
});
