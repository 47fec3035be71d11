/** Presence and command expiry decided from an injected clock. */
import { expect } from 'chai';
import { EndpointPresence, staleQuery } from '../../src/resources/endpoints/presence.js';
import type { EndpointStore } from '../../src/resources/endpoints/store.js';
import { CommandExpiry } from '../../src/resources/commands/expiry.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

describe('presence from an injected clock', () => {
  let now = T0;
  const overrides = new Map([
    ['org-long', 3600],
    ['org-long-2', 3600],
    ['org-short', 30],
  ]);
  const presence = new EndpointPresence({} as EndpointStore, { defaultTimeoutSeconds: 600, now: () => now }, { presenceTimeouts: async () => overrides });

  before(async () => {
    await presence.refresh(); // reads the overrides once
  });

  it('a CONNECTED record reads POTENTIALLY_DISCONNECTED once its organization timeout has passed since lastSeen, and only then', () => {
    const doc = { connectionStatus: 'CONNECTED' as const, lastSeen: new Date(T0).toISOString(), orgId: 'org-any' };
    now = T0 + 600_000;
    expect(presence.effectiveStatus(doc)).to.equal('CONNECTED');
    now = T0 + 600_001;
    expect(presence.effectiveStatus(doc)).to.equal('POTENTIALLY_DISCONNECTED');
    expect(presence.effectiveStatus({ ...doc, orgId: 'org-long' })).to.equal('CONNECTED');
    now = T0 + 31_000;
    expect(presence.effectiveStatus({ ...doc, orgId: 'org-short' })).to.equal('POTENTIALLY_DISCONNECTED');
  });

  it('records without lastSeen, and records not CONNECTED, keep their stored status', () => {
    now = T0 + 365 * 86_400_000;
    expect(presence.effectiveStatus({ connectionStatus: 'CONNECTED', orgId: 'o' })).to.equal('CONNECTED');
    expect(presence.effectiveStatus({ connectionStatus: 'DISCONNECTED', lastSeen: new Date(T0).toISOString(), orgId: 'o' })).to.equal('DISCONNECTED');
  });

  it('the stale query: one range per distinct overriding timeout, the default range for every other organization', () => {
    const q = staleQuery(T0, 600, overrides) as { bool: { filter: unknown[]; should: unknown[] } };
    expect(q.bool.filter).to.deep.equal([{ term: { connectionStatus: 'CONNECTED' } }]);
    expect(q.bool.should).to.deep.equal([
      {
        bool: {
          filter: [{ range: { lastSeen: { lt: new Date(T0 - 600_000).toISOString() } } }],
          must_not: [{ terms: { orgId: ['org-long', 'org-long-2', 'org-short'] } }],
        },
      },
      { bool: { filter: [{ terms: { orgId: ['org-long', 'org-long-2'] } }, { range: { lastSeen: { lt: new Date(T0 - 3_600_000).toISOString() } } }] } },
      { bool: { filter: [{ terms: { orgId: ['org-short'] } }, { range: { lastSeen: { lt: new Date(T0 - 30_000).toISOString() } } }] } },
    ]);
  });

  it('the stamp window is a tenth of the shortest timeout, at most a minute', () => {
    expect(presence.stampWindowMs()).to.equal(3000);
  });
});

describe('command expiry from an injected clock', () => {
  let now = T0;
  const expiry = new CommandExpiry({ ttlSeconds: 60, maxRetries: 2, now: () => now });
  const created = new Date(T0).toISOString();

  it('a waiting message expires at expiresAt (or createdAt + TTL without one); sent and failed ones never do', () => {
    const m = { status: 'CREATED' as const, createdAt: created, expiresAt: expiry.expiresAt(T0, 10) };
    now = T0 + 9_999;
    expect(expiry.effectiveStatus(m)).to.equal('CREATED');
    now = T0 + 10_000;
    expect(expiry.effectiveStatus(m)).to.equal('EXPIRED');
    expect(expiry.effectiveStatus({ ...m, status: 'RETRY' })).to.equal('EXPIRED');
    expect(expiry.effectiveStatus({ ...m, status: 'SENT' })).to.equal('SENT');
    expect(expiry.effectiveStatus({ ...m, status: 'MSG_WSS_FAIL' })).to.equal('MSG_WSS_FAIL');
    const legacy = { status: 'CREATED' as const, createdAt: created };
    now = T0 + 59_999;
    expect(expiry.effectiveStatus(legacy)).to.equal('CREATED');
    now = T0 + 60_000;
    expect(expiry.effectiveStatus(legacy)).to.equal('EXPIRED');
  });

  it('retries are exhausted after maxRetries moves into RETRY', () => {
    expect(expiry.retriesExhausted({ retries: 0 })).to.equal(false);
    expect(expiry.retriesExhausted({ retries: 1 })).to.equal(false);
    expect(expiry.retriesExhausted({ retries: 2 })).to.equal(true);
    expect(expiry.retriesExhausted({})).to.equal(false);
  });
});
