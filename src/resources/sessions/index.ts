/** Builds the login-sessions resource (docs/sso.md). */
import type { BaseDeps } from '../deps.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import type { SessionAudit, SessionRechecker } from './model.js';
import { SessionService } from './service.js';
import { SessionStore } from './store.js';

export function createSessions(
  { config, store, log }: BaseDeps,
  deps: { feed: ChangeFeedStore; audit: SessionAudit },
  rechecker?: SessionRechecker,
): SessionService {
  return new SessionService(
    new SessionStore(store),
    deps.feed,
    deps.audit,
    { ...config.sessions, cacheSeconds: config.tokenCacheSeconds, ...(rechecker ? { rechecker } : {}) },
    log,
  );
}
