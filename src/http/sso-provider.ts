/**
 * The identity provider (docs/sso.md, ADR 0070): its discovery at start, and the recheck of a
 * login session with its refresh token while it lives
 * (docs/adr/0076-sessions-rechecked-at-the-identity-provider.md).
 */
import * as oidc from 'openid-client';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from '../config.js';
import type { Logger } from '../log.js';
import type { SessionDoc, SessionRecheck, SessionRechecker } from '../resources/sessions/model.js';
import { grantsFromClaim } from './oidc-claims.js';
import { RefreshTokenSeal } from './sso-seal.js';

/** The identity provider, discovered at start. */
export interface IdentityProvider {
  settings: OidcConfig;
  publicUrl: string;
  config: oidc.Configuration;
  /** Its signing keys (JWKS), for back-channel logout tokens. */
  keys: JWTVerifyGetKey;
  /** Seals its refresh tokens for the store. */
  seal: RefreshTokenSeal;
}

/**
 * Discovers the identity provider (`/.well-known/openid-configuration` of ECS_OIDC_ISSUER).
 * Throws one sentence naming the variable when it is wrong or unreachable.
 */
export async function discoverIdentityProvider(settings: OidcConfig, publicUrl: string, log: Logger): Promise<IdentityProvider> {
  const insecure = settings.issuer.startsWith('http:');
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(
      new URL(settings.issuer),
      settings.clientId,
      undefined,
      oidc.ClientSecretBasic(settings.clientSecret),
      { ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}), timeout: 10 },
    );
  } catch (err) {
    throw new Error(
      `cannot use the identity provider: ECS_OIDC_ISSUER=${settings.issuer} did not answer its discovery document ` +
        `(${settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration): ${(err as Error).message}`,
      { cause: err },
    );
  }
  const jwksUri = config.serverMetadata().jwks_uri;
  if (!jwksUri) throw new Error(`cannot use the identity provider: ECS_OIDC_ISSUER=${settings.issuer} publishes no jwks_uri`);
  if (insecure) log.warn({ issuer: settings.issuer }, 'ECS_OIDC_ISSUER is plain http: acceptable only for a local identity provider');
  return { settings, publicUrl, config, keys: createRemoteJWKSet(new URL(jwksUri)), seal: new RefreshTokenSeal(settings.clientSecret) };
}

/** The roles claim of the ID token's claims, else of userinfo (read with the access token). Throws when userinfo cannot be read. */
async function rolesClaimOf(p: IdentityProvider, claims: Record<string, unknown> | undefined, accessToken: string, subject: string): Promise<unknown> {
  const inToken = claims?.[p.settings.rolesClaim];
  if (inToken !== undefined) return inToken;
  const userinfo: Record<string, unknown> = await oidc.fetchUserInfo(p.config, accessToken, subject);
  return userinfo[p.settings.rolesClaim];
}

/**
 * Asks the identity provider about a session with its refresh token: a refused refresh
 * (`invalid_grant`: signed out there, disabled, deleted) ends it; otherwise the roles claim of
 * the new ID token (else userinfo) gives the person's grants now.
 */
export function idpRechecker(p: IdentityProvider): SessionRechecker {
  const { seal } = p;
  return {
    async recheck(doc: SessionDoc): Promise<SessionRecheck> {
      const refreshToken = doc.refreshToken === undefined ? undefined : seal.open(doc.refreshToken, doc);
      if (refreshToken === undefined) return { kind: 'ended', reason: 'its refresh token was sealed under another client secret' };
      let tokens: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
      try {
        tokens = await oidc.refreshTokenGrant(p.config, refreshToken);
      } catch (err) {
        if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
          return { kind: 'ended', reason: `${err.error}${err.error_description ? `: ${err.error_description}` : ''}` };
        }
        throw err;
      }
      const claims = tokens.claims() as (oidc.IDToken & Record<string, unknown>) | undefined;
      if (claims && claims.sub !== doc.subject) return { kind: 'ended', reason: 'the provider answered for another person' };
      const { grants } = grantsFromClaim(await rolesClaimOf(p, claims, tokens.access_token, doc.subject), { allowSystem: p.settings.allowSystemGrant });
      return {
        kind: 'current',
        grants,
        ...(tokens.refresh_token ? { refreshToken: seal.seal(tokens.refresh_token, doc) } : {}),
        ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
      };
    },
  };
}
