/** Builds the tokens resource: its store (the verifier authentication looks tokens up in) and its service. */
import type { BaseDeps } from '../deps.js';
import type { OrganizationService } from '../organizations/service.js';
import type { TokenCache, TokenVerifier } from '../../access/tokens.js';
import type { ChangeFeedStore } from '../../store/change-feed.js';
import { TokenService } from './service.js';
import { TokenStore } from './store.js';

/** `cacheFor` makes the cache of verified tokens (the HTTP layer's authenticator) over this resource's store. */
export function createTokens<C extends TokenCache>(
  { store }: BaseDeps,
  deps: { orgs: OrganizationService; feed: ChangeFeedStore },
  cacheFor: (verifier: TokenVerifier) => C,
): { service: TokenService; cache: C } {
  const tokenStore = new TokenStore(store);
  const cache = cacheFor(tokenStore);
  return { service: new TokenService(tokenStore, deps.orgs, cache, deps.feed), cache };
}
