/**
 * Replaces carrying a version, as one model: a register holding a value and a version. A write
 * that carries the register's current version takes effect (200, the version moves on: +1 for an
 * integer version, a new SeqNoPrimaryTerm otherwise); one carrying any other version is 409 and
 * changes nothing. A blind replace (no version sent) always takes effect. The register's final
 * value and version, read back through the API, must be those of the last write the model
 * applied: no lost update.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../app.js';
import type { Api, ApiResponse } from '../http.js';
import type { Model } from './linearize.js';
import { arm, client, conditionalFaults, History, modelCluster, modelProperty, type Answer, type ModelCluster } from './run.js';

type Rec = Record<string, unknown>;

export interface Register {
  name: string;
  /** 'integer' (+1 per write), 'seqNo' (SeqNoPrimaryTerm) or 'blind' (no version sent). */
  kind: 'integer' | 'seqNo' | 'blind';
  /** The store write the proxy's faults aim at. */
  write: RegExp;
  /** Values a caller may write. */
  values: readonly string[];
  /** A fresh record (through instance 0), with what the run needs to address it. */
  create(c: ModelCluster, org: string): Promise<{ id: string; rec: Rec }>;
  read(api: Api, id: string): Promise<ApiResponse<Rec>>;
  /** A replace of `rec` (as read) with `value`. */
  replace(api: Api, id: string, rec: Rec, value: string): Promise<ApiResponse>;
  valueOf(rec: Rec): string;
}

interface State {
  version: string;
  value: string;
}

interface Input {
  /** The version the caller sends (its key; '' for a blind replace). */
  sent: string;
  value: string;
  /** Unique per operation: names a version nobody saw. */
  nth: number;
}

const versionKey = (v: unknown): string => JSON.stringify(v ?? null);

function registerModel(r: Register): Model<State, Input, Answer> {
  return {
    step(s, input, answer) {
      const wins = r.kind === 'blind' || input.sent === s.version;
      if (!wins) return answer === undefined || answer.status === 409 ? s : undefined;
      if (answer === undefined) {
        const version = r.kind === 'integer' ? String(Number(s.version) + 1) : `unseen-${input.nth}`;
        return { version, value: input.value };
      }
      if (answer.status !== 200 || r.valueOf(answer.body as Rec) !== input.value) return undefined;
      if (r.kind === 'blind') return { version: s.version, value: input.value };
      const version = versionKey((answer.body as Rec).version);
      if (r.kind === 'integer' && version !== String(Number(s.version) + 1)) return undefined;
      if (version === s.version) return undefined;
      return { version, value: input.value };
    },
  };
}

interface Caller {
  instance: number;
  value: string;
  jitter: number;
  /** Reads the record through its own instance just before writing (else writes the version read at the start). */
  fresh: boolean;
  /** On 409 reads again and writes once more, as a client retrying a read-modify-write. */
  retry: boolean;
}

/** Registers the model property of one versioned replace. */
export function registerProperty(r: Register): void {
  const caller = fc.record({
    instance: fc.integer({ min: 0, max: 1 }),
    value: fc.constantFrom(...r.values),
    jitter: fc.integer({ min: 0, max: 15 }),
    fresh: fc.boolean(),
    retry: fc.boolean(),
  });
  const kase = fc.record({ callers: fc.array(caller, { minLength: 2, maxLength: 5 }), fault: conditionalFaults });
  let org: string | undefined;
  modelProperty(`${r.name}: concurrent replaces through two instances match the versioned-register model`, kase, async (c, s, k) => {
    org ??= await (await modelCluster()).apps[0].world.org(undefined, uid('model-org'));
    const { id, rec } = await r.create(c, org);
    const initial: State = { version: r.kind === 'blind' ? '' : versionKey(rec.version), value: r.valueOf(rec) };
    const h = new History<Input>(s);
    let nth = 0;
    arm(c.proxy, k.fault, r.write);
    const write = async (who: number, p: Caller, base: Rec): Promise<void> => {
      const api = client(c, p.instance);
      const sent = r.kind === 'blind' ? '' : versionKey(base.version);
      const op = await h.op(who, { sent, value: p.value, nth: nth++ }, `caller ${who} writes ${p.value}`, p.jitter, () => r.replace(api, id, base, p.value));
      if (op.answer?.status === 409 && p.retry) {
        const again = await h.send(`caller ${who} reads again`, 0, () => r.read(api, id));
        expect(again.status).to.equal(200);
        await h.op(who, { sent: versionKey((again.body as Rec).version), value: p.value, nth: nth++ }, `caller ${who} writes ${p.value} again`, 0, () =>
          r.replace(api, id, again.body as Rec, p.value),
        );
      }
    };
    await h.all(
      k.callers.map(async (p, who) => {
        let base = rec;
        if (p.fresh) {
          const read = await h.send(`caller ${who} reads`, p.jitter, () => r.read(client(c, p.instance), id));
          expect(read.status).to.equal(200);
          base = read.body as Rec;
        }
        await write(who, p, base);
      }),
    );
    const final = await r.read(c.apps[0].admin, id);
    expect(final.status, final.text).to.equal(200);
    const seen: State = { version: r.kind === 'blind' ? '' : versionKey(final.body.version), value: r.valueOf(final.body) };
    h.check(registerModel(r), initial, (m) => m.value === seen.value && (m.version === seen.version || m.version.startsWith('unseen-')), seen);
  });
}
