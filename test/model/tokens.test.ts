/**
 * Token revocation under concurrent uses, as a model: revocations (always 204, repeated by a
 * caller whose answer was lost) race with requests carrying the token on both instances. A use on
 * an instance after that instance answered a revocation is refused (401); a use on the other
 * instance may still pass until the change feed reaches it; after the run both refuse the token
 * and its record says revoked.
 */
import fc from 'fast-check';
import { expect } from 'chai';
import { uid } from '../helpers/app.js';
import type { Model } from '../helpers/model/linearize.js';
import { arm, client, faults, History, modelCluster, modelProperty, type Answer } from '../helpers/model/run.js';
import { waitFor } from '../helpers/wait.js';

interface TokenState {
  /** Instances that answered a revocation (0, 1); empty while the token is live. */
  revokedOn: number[];
}

type Act = { kind: 'revoke'; instance: number } | { kind: 'use'; instance: number };

const tokenModel: Model<TokenState, Act, Answer> = {
  step(s, act, answer) {
    if (act.kind === 'revoke') {
      if (answer !== undefined && answer.status !== 204) return undefined;
      // A revocation whose answer was lost may have written the record without telling its instance.
      if (answer === undefined) return s.revokedOn.length > 0 ? s : { revokedOn: [-1] };
      return s.revokedOn.includes(act.instance) ? s : { revokedOn: [...s.revokedOn, act.instance].sort() };
    }
    if (answer === undefined) return s;
    const accepted = answer.status !== 401;
    if (accepted && answer.status !== 200 && answer.status !== 404) return undefined;
    if (s.revokedOn.length === 0) return accepted ? s : undefined;
    return s.revokedOn.includes(act.instance) && accepted ? undefined : s;
  },
};

describe('model: token revocation under concurrent uses', () => {
  let org: string | undefined;
  modelProperty(
    'a token revoked through one instance while both serve it: refused where revoked at once, everywhere after',
    fc.record({
      callers: fc.array(fc.record({ instance: fc.integer({ min: 0, max: 1 }), revoke: fc.boolean(), jitter: fc.integer({ min: 0, max: 40 }) }), { minLength: 2, maxLength: 6 }),
      fault: faults,
    }),
    async (c, s, k) => {
      org ??= await (await modelCluster()).apps[0].world.org(undefined, uid('model-org'));
      const orgId = org;
      const minted = await c.apps[0].admin.post<{ id: string; token: string }>('/admin/tokens', { name: uid('tok'), role: 'admin', orgId });
      expect(minted.status, minted.text).to.equal(201);
      const use = (i: number): ReturnType<ReturnType<typeof client>['get']> => client(c, i, minted.body.token).get(`/config/org/${orgId}`);
      // Both instances know the token before the run.
      for (const i of [0, 1]) expect((await use(i)).status).to.not.equal(401);
      const h = new History<Act>(s);
      arm(c.proxy, k.fault, /^POST \/[^/]*-tokens\/_update\//);
      const callers = [...k.callers, { instance: 0, revoke: true, jitter: 0 }];
      await h.all(
        callers.map(async (p, who) => {
          if (!p.revoke) {
            // Twice, the second after the first was answered: uses spread over the revocations.
            for (const n of [1, 2]) await h.op(who, { kind: 'use', instance: p.instance }, `caller ${who} uses the token on ${p.instance} (${n})`, p.jitter * n, () => use(p.instance));
            return;
          }
          const revoke = (): ReturnType<ReturnType<typeof client>['delete']> => client(c, p.instance).delete(`/admin/tokens/${minted.body.id}`);
          const op = await h.op(who, { kind: 'revoke', instance: p.instance }, `caller ${who} revokes on ${p.instance}`, p.jitter, revoke);
          if (op.answer === undefined) await h.repeat(op, `caller ${who} revokes again on ${p.instance}`, revoke);
        }),
      );
      h.check(tokenModel, { revokedOn: [] }, (st) => st.revokedOn.length > 0, 'revoked');
      for (const i of [0, 1]) {
        const refused = await waitFor(() => use(i), (r) => r.status === 401, 5_000);
        expect(refused.met, `instance ${i} still accepts the revoked token`).to.equal(true);
      }
      const rec = await c.apps[0].admin.get<{ revokedAt?: string }>(`/admin/tokens/${minted.body.id}`);
      expect(rec.body.revokedAt, rec.text).to.be.a('string');
    },
  );
});
