/**
 * Concurrency through HTTP: optimistic versions under contention (integer `_version` and
 * SeqNoPrimaryTerm), read-modify-write counters retried on 409, connection bookkeeping that
 * ends in the state of the last acknowledged call, and a license state machine under
 * conflicting moves.
 */
import { expect } from 'chai';
import { uid, type EndpointRecord, useOrg } from '../helpers/app.js';
import type { ApiResponse } from '../helpers/http.js';
import { LICENSE_STATES, LICENSE_TRANSITIONS, type LicenseState } from '../../src/resources/licenses/model.js';
import { retryPause } from '../helpers/wait.js';

const CLIENTS = 50;

function statuses(results: ApiResponse[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/**
 * An answer the admission lanes gave at the door (docs/adr/0030-shedding-at-the-door.md): the
 * request was not run, so any client may send it again after Retry-After. A loaded machine
 * shrinks the lanes while agents' latency suffers.
 */
function shedAtTheDoor(res: ApiResponse): boolean {
  if (res.status !== 429 && res.status !== 503) return false;
  const message = (res.body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /at capacity|too many concurrent/.test(message) && res.headers.get('retry-after') !== null;
}

/** Sends until the answer is not a shed one, waiting Retry-After between tries. */
async function unlessShed<T>(send: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> {
  for (;;) {
    const res = await send();
    if (!shedAtTheDoor(res)) return res;
    await retryPause(Number(res.headers.get('retry-after')) * 1000);
  }
}

/**
 * A client's read-modify-write: read the record, change it, write it with the version read;
 * on 409 read again (after a short random pause so the clients do not retry in lock step).
 * A request shed at the door was not run and is sent again; any other answer fails.
 */
async function incrementWithRetry(read: () => Promise<ApiResponse<Record<string, unknown>>>, write: (rec: Record<string, unknown>) => Promise<ApiResponse>): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const rec = await unlessShed(read);
    expect(rec.status, rec.text).to.equal(200);
    const res = await unlessShed(() => write(rec.body));
    if (res.status === 200) return attempt;
    expect(res.status, res.text).to.equal(409);
    await retryPause(Math.random() * 20 * Math.min(attempt, 5));
  }
}

describe('concurrency', () => {
  const o = useOrg();

  // A request shed at the door was not run: it is sent again, and then meets the same version check.
  describe(`${CLIENTS} parallel conditional updates with the same version: exactly one succeeds, the rest get 409`, () => {
    it('endpoint PUT (integer version)', async function () {
      this.timeout(60_000);
      const ep = await o.t.world.endpoint(o.org);
      const results = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => unlessShed(() => o.admin.put<EndpointRecord>(`/endpoint/${ep.id}`, { orgId: o.org, displayName: `writer-${i}`, version: ep.version }))),
      );
      expect(statuses(results)).to.deep.equal({ 200: 1, 409: CLIENTS - 1 });
      const winner = results.find((r) => r.status === 200)?.body as EndpointRecord;
      const now = (await o.admin.get<EndpointRecord>(`/endpoint/${ep.id}`)).body;
      expect(now.version).to.equal(ep.version + 1);
      expect(now.displayName).to.equal(winner.displayName);
    });

    it('enabled-modules PUT (integer version)', async function () {
      this.timeout(60_000);
      const ep = await o.t.world.endpoint(o.org);
      const created = await o.admin.post<{ version: number }>(`/endpoint/${ep.id}/enabled-modules`, { fim: 'PENDING' });
      expect(created.status, created.text).to.equal(200);
      const states = ['ACTIVE', 'INACTIVE'];
      const results = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => unlessShed(() => o.admin.put(`/endpoint/${ep.id}/enabled-modules`, { fim: states[i % 2], version: created.body.version }))),
      );
      expect(statuses(results)).to.deep.equal({ 200: 1, 409: CLIENTS - 1 });
      const now = (await o.admin.get<{ version: number }>(`/endpoint/${ep.id}/enabled-modules`)).body;
      expect(now.version).to.equal(created.body.version + 1);
    });

    it('command-message status PATCH (SeqNoPrimaryTerm version)', async function () {
      this.timeout(60_000);
      const ep = await o.t.world.endpoint(o.org);
      const m = await o.admin.post<{ id: string; version: { sequenceNumber: number; primaryTerm: number } }>(`/command-message/endpoint/${ep.id}`, {
        module: 'cmd',
        name: 'ping',
      });
      expect(m.status, m.text).to.equal(201);
      // RETRY → RETRY is an allowed move, so only the version decides.
      const results = await Promise.all(
        Array.from({ length: CLIENTS }, () => unlessShed(() => o.admin.patch(`/command-message/${m.body.id}/status/RETRY`, { version: m.body.version }))),
      );
      expect(statuses(results)).to.deep.equal({ 200: 1, 409: CLIENTS - 1 });
      const now = (await o.admin.get<{ status: string; version: { sequenceNumber: number } }>(`/command-message/${m.body.id}`)).body;
      expect(now.status).to.equal('RETRY');
      expect(now.version.sequenceNumber).to.be.greaterThan(m.body.version.sequenceNumber);
    });
  });

  describe(`a counter incremented by ${CLIENTS} clients that retry on 409 ends exact`, () => {
    it('endpoint hostInfo.procs through PUT with the version read', async function () {
      this.timeout(180_000);
      const ep = await o.t.world.endpoint(o.org, { hostInfo: { hostName: uid('host'), procs: 0 } });
      const attempts = await Promise.all(
        Array.from({ length: CLIENTS }, () =>
          incrementWithRetry(
            () => o.admin.get(`/endpoint/${ep.id}`),
            (rec) => {
              const hostInfo = rec.hostInfo as { procs: number };
              return o.admin.put(`/endpoint/${ep.id}`, { ...rec, hostInfo: { ...hostInfo, procs: hostInfo.procs + 1 } });
            },
          ),
        ),
      );
      const now = (await o.admin.get<EndpointRecord>(`/endpoint/${ep.id}`)).body;
      expect((now.hostInfo as { procs: number }).procs).to.equal(CLIENTS);
      expect(now.version).to.equal(ep.version + CLIENTS);
      // Contention really happened: some clients had to retry.
      expect(attempts.reduce((a, b) => a + b, 0)).to.be.greaterThan(CLIENTS);
    });

    it('license contract nbrLicensesPurchased through PUT with the version read', async function () {
      this.timeout(180_000);
      const c = await o.admin.post<{ version: number }>('/org-license-contract', { orgId: o.org, type: 'BDHL', nbrLicensesPurchased: 0 });
      expect(c.status, c.text).to.equal(200);
      const path = `/org-license-contract/org/${o.org}/type/BDHL`;
      await Promise.all(
        Array.from({ length: CLIENTS }, () =>
          incrementWithRetry(
            () => o.admin.get(path),
            (rec) => o.admin.put(path, { ...rec, nbrLicensesPurchased: (rec.nbrLicensesPurchased as number) + 1 }),
          ),
        ),
      );
      const now = (await o.admin.get<{ nbrLicensesPurchased: number; version: number }>(path)).body;
      expect(now.nbrLicensesPurchased).to.equal(CLIENTS);
      expect(now.version).to.equal(c.body.version + CLIENTS);
    });
  });

  it('interleaved connect/disconnect calls end in the state of the last acknowledged call', async function () {
    this.timeout(120_000);
    const ep = await o.t.world.endpoint(o.org);
    const agent = o.t.world.as(await o.t.world.token('agent', o.org, ep.id));
    // The agent, an organization admin (read + conditional write) and the system token (one blind write).
    const callers = [agent, o.admin, o.t.admin];
    const moves = ['connect', 'disconnect'] as const;
    const stateOf = { connect: 'CONNECTED', disconnect: 'DISCONNECTED' } as const;
    for (let round = 0; round < 15; round++) {
      // A burst of concurrent calls from every caller…
      const burst = Array.from({ length: 12 }, (_, i) => ({ caller: callers[i % 3], move: moves[Math.floor(Math.random() * 2)] }));
      const acks = await Promise.all(burst.map((b) => b.caller.post(`/endpoint/${ep.id}/${b.move}`)));
      expect(statuses(acks), JSON.stringify(acks.filter((a) => a.status !== 204).map((a) => a.text))).to.deep.equal({ 204: burst.length });
      const afterBurst = (await o.admin.get<EndpointRecord>(`/endpoint/${ep.id}`)).body;
      expect(burst.map((b) => stateOf[b.move])).to.include(afterBurst.connectionStatus);
      // …then one call sent after the burst was acknowledged: its state must be the one that stays.
      const last = moves[round % 2];
      const ack = await callers[round % 3].post(`/endpoint/${ep.id}/${last}`);
      expect(ack.status, ack.text).to.equal(204);
      const now = (await o.admin.get<EndpointRecord>(`/endpoint/${ep.id}`)).body;
      expect(now.connectionStatus, `round ${round}`).to.equal(stateOf[last]);
      const stamp = last === 'connect' ? now.lastConnect : now.lastDisconnect;
      for (const other of [now.lastConnect, now.lastDisconnect, afterBurst.lastConnect, afterBurst.lastDisconnect]) {
        if (other !== undefined) expect(Date.parse(String(stamp))).to.be.at.least(Date.parse(String(other)));
      }
    }
  });

  it('a license hammered with conflicting state moves only ever takes allowed moves, one per version', async function () {
    this.timeout(120_000);
    for (let round = 0; round < 4; round++) {
      const id = uid('lic');
      const created = await o.admin.put<{ state: LicenseState; version: number }>(`/license/${id}`, { type: 'ATC', orgId: o.org });
      expect(created.status, created.text).to.equal(200);
      const targets = Array.from({ length: CLIENTS }, () => LICENSE_STATES[Math.floor(Math.random() * LICENSE_STATES.length)]);
      // Each client asks its move a few times, as a retrying caller would.
      const results = (
        await Promise.all(
          targets.map(async (to) => {
            const out: ApiResponse<{ state: LicenseState; version: number }>[] = [];
            for (let i = 0; i < 3; i++) out.push(await o.admin.patch(`/license/${id}/state/${to}`));
            return out;
          }),
        )
      ).flat();
      for (const r of results) expect([200, 409], r.text).to.include(r.status);
      // The successful moves, in version order, form one path through the state machine.
      const moves = results.filter((r) => r.status === 200).map((r) => r.body);
      moves.sort((a, b) => a.version - b.version);
      let state = created.body.state;
      let version = created.body.version;
      for (const m of moves) {
        expect(m.version, 'one successful move per version').to.equal(version + 1);
        expect(LICENSE_TRANSITIONS[state], `${state} → ${m.state}`).to.include(m.state);
        state = m.state;
        version = m.version;
      }
      const now = (await o.admin.get<{ state: LicenseState; version: number }>(`/license/${id}`)).body;
      expect(now).to.include({ state, version });
      // Every refused move was one the state machine refuses from the state at some point, never a lost success.
      expect(moves.length).to.be.greaterThan(0);
    }
  });
});
