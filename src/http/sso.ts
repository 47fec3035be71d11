/**
 * Single sign-on through an OpenID Connect identity provider (docs/sso.md): the relying party
 * (authorization code flow with PKCE and a confidential client, openid-client; ADR 0070), the
 * login session's cookie, and the routes a browser and the identity provider call:
 *
 *   GET  /auth/login                302 to the identity provider (`return`: a console path to come back to)
 *   GET  /auth/callback             the provider's answer: a session, or a page saying why not
 *   POST /auth/logout               ends the session everywhere; answers the provider's end-session URL
 *   GET  /auth/session              who is signed in (401 without a session)
 *   POST /auth/backchannel-logout   OpenID Connect Back-Channel Logout 1.0
 *   GET  /auth/methods              which sign-in methods the console offers
 *
 * The provider's discovery and rechecks are ./sso-provider.ts, the sealing of its refresh tokens
 * ./sso-seal.ts, cookies and pages ./sso-pages.ts. These routes stay outside the route table:
 * they answer redirects, cookies and HTML, not the API's JSON, and are not part of the served
 * OpenAPI document.
 *
 * The session itself lives in the store (src/resources/sessions); a request carrying its
 * cookie becomes the same Access as a token's (src/http/router.ts). While it lives, the
 * provider is asked again every ECS_SESSION_RECHECK_SECONDS with the refresh token it gave
 * (`idpRechecker`, docs/adr/0076-sessions-rechecked-at-the-identity-provider.md).
 */
import crypto from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import * as oidc from 'openid-client';
import { jwtVerify } from 'jose';
import coBody from 'co-body';
import type { Logger } from '../log.js';
import { BadRequestError, UnauthorizedError } from '../errors.js';
import { grantsFromClaim } from './oidc-claims.js';
import { csrfRefusal, CSRF_HEADER, signOutRefusal } from './csrf.js';
import { ForbiddenError } from '../errors.js';
import { sessionEvent } from '../resources/sessions/events.js';
import type { LoginSessions, RequestRef, SessionAudit, VerifiedSession } from '../resources/sessions/model.js';
import { consoleReturnPath, cookie, LOGIN_COOKIE, page, SESSION_COOKIE, sessionSecretOf } from './sso-pages.js';
import type { IdentityProvider } from './sso-provider.js';

export { consoleReturnPath, SESSION_COOKIE, sessionSecretOf } from './sso-pages.js';
export { discoverIdentityProvider, idpRechecker, type IdentityProvider } from './sso-provider.js';
export { RefreshTokenSeal } from './sso-seal.js';

/** How long a sign-in may take at the identity provider. */
const LOGIN_TTL_MS = 15 * 60_000;
const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  exp: number;
}

export interface SsoDeps {
  idp: IdentityProvider | undefined;
  sessions: LoginSessions;
  audit: SessionAudit;
  /** The console offers the token field (ECS_CONSOLE_TOKEN_SIGNIN). */
  tokenSignIn: boolean;
  /** The public origin when SSO is off (the CSRF rule needs one). */
  publicUrl: string | undefined;
}

/** The request an audit event of a session belongs to. */
function requestRef(ctx: Koa.Context): RequestRef {
  return { requestId: String(ctx.state.requestId ?? ''), method: ctx.method, path: ctx.path };
}

/**
 * The login session of a request carried by the session cookie, with the cross-site rule
 * applied to unsafe methods (docs/adr/0072-cross-site-rule-for-session-cookies.md).
 * 401 without a live session; 403 for a write that is not same-origin or lacks the CSRF token.
 */
export async function sessionOf(
  ctx: Koa.Context,
  secret: string,
  sessions: LoginSessions,
  publicOrigin: string,
  rule: 'write' | 'sign-out' = 'write',
): Promise<VerifiedSession> {
  const session = await sessions.verify(secret, requestRef(ctx));
  // Known before the cross-site check, so a refusal names its person in the audit trail.
  ctx.state.principal = session.principal;
  const req = { method: ctx.method, origin: ctx.get('origin'), secFetchSite: ctx.get('sec-fetch-site'), csrfHeader: ctx.get(CSRF_HEADER) };
  const refusal = rule === 'sign-out' ? signOutRefusal(req, publicOrigin) : csrfRefusal(req, publicOrigin, session.csrfToken);
  if (refusal) throw new ForbiddenError(refusal);
  return session;
}

/** The /auth routes. Mounted whether or not SSO is configured (GET /auth/methods tells the console). */
export function ssoRouter(deps: SsoDeps, log: Logger): Router {
  const router = new Router({ prefix: '/auth' });
  const { idp } = deps;
  const publicUrl = idp?.publicUrl ?? deps.publicUrl;
  const publicOrigin = publicUrl ? new URL(publicUrl).origin : '';
  const secure = publicUrl?.startsWith('https:') ?? false;
  const redirectUri = publicUrl ? `${publicUrl}/auth/callback` : '';
  const loginKey = idp ? crypto.createHmac('sha256', idp.settings.clientSecret).update('ecs login state').digest() : Buffer.alloc(0);

  const sealLogin = (p: PendingLogin): string => {
    const body = Buffer.from(JSON.stringify(p)).toString('base64url');
    return `${body}.${crypto.createHmac('sha256', loginKey).update(body).digest('base64url')}`;
  };
  const openLogin = (v: string | undefined): PendingLogin | undefined => {
    if (!v) return undefined;
    const [body, mac] = v.split('.');
    if (!body || !mac) return undefined;
    const want = crypto.createHmac('sha256', loginKey).update(body).digest();
    const got = Buffer.from(mac, 'base64url');
    if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) return undefined;
    const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as PendingLogin;
    return p.exp > Date.now() ? p : undefined;
  };
  const requireIdp = (): IdentityProvider => {
    if (!idp) throw new BadRequestError('single sign-on is not configured (ECS_OIDC_ISSUER)');
    return idp;
  };

  router.get('/methods', (ctx) => {
    ctx.body = { sso: idp !== undefined, token: deps.tokenSignIn, ...(idp ? { loginUrl: '/auth/login' } : {}) };
  });

  router.get('/login', async (ctx) => {
    const p = requireIdp();
    const verifier = oidc.randomPKCECodeVerifier();
    const pending: PendingLogin = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier,
      returnTo: consoleReturnPath(ctx.query.return),
      exp: Date.now() + LOGIN_TTL_MS,
    };
    const url = oidc.buildAuthorizationUrl(p.config, {
      redirect_uri: redirectUri,
      scope: p.settings.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    ctx.set('Set-Cookie', cookie(LOGIN_COOKIE, sealLogin(pending), { maxAgeSeconds: LOGIN_TTL_MS / 1000, secure, path: '/auth' }));
    ctx.redirect(url.href);
  });

  router.get('/callback', async (ctx) => {
    const p = requireIdp();
    const pending = openLogin(ctx.cookies.get(LOGIN_COOKIE));
    const clearLogin = cookie(LOGIN_COOKIE, '', { maxAgeSeconds: 0, secure, path: '/auth' });
    if (typeof ctx.query.error === 'string') {
      ctx.set('Set-Cookie', clearLogin);
      return page(ctx, 400, 'Sign-in did not complete', [`The identity provider answered: ${ctx.query.error}${typeof ctx.query.error_description === 'string' ? ` (${ctx.query.error_description})` : ''}.`]);
    }
    if (!pending) {
      return page(ctx, 400, 'Sign-in expired', ['This sign-in was started too long ago, in another browser, or not at all. Start again from the console.']);
    }
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      const current = new URL(`${redirectUri}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      tokens = await oidc.authorizationCodeGrant(p.config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      log.warn({ err: { message: (err as Error).message } }, 'sign-in: the authorization code could not be redeemed');
      ctx.set('Set-Cookie', clearLogin);
      return page(ctx, 400, 'Sign-in failed', ['The answer of the identity provider could not be verified. Start again from the console.']);
    }
    const claims = tokens.claims() as (oidc.IDToken & Record<string, unknown>) | undefined;
    if (!claims) throw new BadRequestError('the identity provider returned no ID token');
    let rolesClaim: unknown = claims[p.settings.rolesClaim];
    const userinfo: Record<string, unknown> = {};
    if (rolesClaim === undefined || claims.email === undefined || claims.name === undefined) {
      try {
        Object.assign(userinfo, await oidc.fetchUserInfo(p.config, tokens.access_token, claims.sub));
        rolesClaim ??= userinfo[p.settings.rolesClaim];
      } catch (err) {
        log.warn({ err: { message: (err as Error).message } }, 'sign-in: userinfo could not be read; the ID token alone decides');
      }
    }
    const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, 256) : undefined);
    const email = text(claims.email) ?? text(userinfo.email);
    const name = text(claims.name) ?? text(userinfo.name) ?? text(claims.preferred_username) ?? text(userinfo.preferred_username);
    const person = { subject: claims.sub, issuer: claims.iss, ...(email ? { email } : {}), ...(name ? { name } : {}) };
    const { grants, ignored } = grantsFromClaim(rolesClaim, { allowSystem: p.settings.allowSystemGrant });
    ctx.set('Set-Cookie', clearLogin);
    if (grants.length === 0) {
      await deps.audit.record(sessionEvent('REFUSAL', 'signIn', 403, requestRef(ctx), { ...person, grants: [] }, { reason: 'no-grant' }));
      return page(ctx, 403, 'No access to the Endpoint Control Service', [
        `You signed in at your identity provider as ${name ?? email ?? claims.sub}, but it grants you no role in this service: its claim "${p.settings.rolesClaim}" holds no value of the form reader@<organization> or admin@<organization>${
          ignored.length > 0 ? ` (ignored: ${ignored.slice(0, 5).join(', ')})` : ''
        }.`,
        'Ask the administrator of your identity provider to grant you a role. Nothing was created for you here.',
      ]);
    }
    const sid = text(claims.sid);
    log.info({ iss: claims.iss, sub: claims.sub, sid }, 'sign-in');
    const { secret } = await deps.sessions.create(
      {
        ...person,
        ...(sid ? { sid } : {}),
        grants,
        ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
        ...(tokens.refresh_token ? { refreshToken: p.seal.seal(tokens.refresh_token, person) } : {}),
      },
      requestRef(ctx),
    );
    ctx.set('Set-Cookie', [clearLogin, cookie(SESSION_COOKIE, secret, { maxAgeSeconds: deps.sessions.maxSeconds, secure })]);
    ctx.redirect(pending.returnTo);
  });

  router.get('/session', async (ctx) => {
    const secret = sessionSecretOf(ctx);
    if (!secret) throw new UnauthorizedError('no login session: sign in');
    const s = await sessionOf(ctx, secret, deps.sessions, publicOrigin);
    const person = s.principal.person;
    ctx.body = {
      subject: person?.subject,
      issuer: person?.issuer,
      ...(person?.email ? { email: person.email } : {}),
      name: s.principal.name,
      grants: s.doc.grants,
      expiresAt: s.expiresAt,
      absoluteExpiresAt: s.doc.expiresAt,
      csrfToken: s.csrfToken,
    };
  });

  router.post('/logout', async (ctx) => {
    const secret = sessionSecretOf(ctx);
    const endSession = (idToken?: string): string | undefined => {
      if (!idp?.config.serverMetadata().end_session_endpoint) return undefined;
      return oidc.buildEndSessionUrl(idp.config, {
        client_id: idp.settings.clientId,
        post_logout_redirect_uri: `${idp.publicUrl}/console`,
        ...(idToken ? { id_token_hint: idToken } : {}),
      }).href;
    };
    ctx.set('Set-Cookie', cookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure }));
    if (!secret) {
      ctx.body = { signedOut: false, ...(endSession() ? { endSessionUrl: endSession() } : {}) };
      return;
    }
    let session: VerifiedSession;
    try {
      session = await sessionOf(ctx, secret, deps.sessions, publicOrigin, 'sign-out');
    } catch (err) {
      // An ended session has nothing left to end here; only the cross-site refusal stands.
      if (err instanceof UnauthorizedError) {
        ctx.body = { signedOut: false, ...(endSession() ? { endSessionUrl: endSession() } : {}) };
        return;
      }
      ctx.remove('Set-Cookie');
      throw err;
    }
    await deps.sessions.signOut(session, requestRef(ctx));
    const url = endSession(session.doc.idToken);
    ctx.body = { signedOut: true, ...(url ? { endSessionUrl: url } : {}) };
  });

  const parseForm: Koa.Middleware = async (ctx, next) => {
    if (ctx.is('urlencoded')) (ctx.request as { body?: unknown }).body = (await coBody.form(ctx, { limit: '64kb' })) as unknown;
    await next();
  };
  router.post('/backchannel-logout', parseForm, async (ctx) => {
    const p = requireIdp();
    ctx.set('Cache-Control', 'no-store');
    const token = (ctx.request as { body?: Record<string, unknown> }).body?.logout_token;
    if (typeof token !== 'string' || token === '') throw new BadRequestError('logout_token: required (application/x-www-form-urlencoded)');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, p.keys, {
        issuer: p.config.serverMetadata().issuer,
        audience: p.settings.clientId,
        maxTokenAge: '10 minutes',
        clockTolerance: 30,
      }));
    } catch (err) {
      throw new BadRequestError(`logout_token: not a valid logout token of the identity provider (${(err as Error).message})`);
    }
    const events = payload.events as Record<string, unknown> | undefined;
    if (!events || typeof events !== 'object' || !(BACKCHANNEL_EVENT in events)) throw new BadRequestError('logout_token: no back-channel logout event');
    if ('nonce' in payload) throw new BadRequestError('logout_token: must not carry a nonce');
    const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
    const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
    if (!sub && !sid) throw new BadRequestError('logout_token: names neither sub nor sid');
    const ended = await deps.sessions.endAtIdp(String(payload.iss), sub, sid, requestRef(ctx));
    log.info({ iss: payload.iss, sub, sid, ended }, 'back-channel logout');
    ctx.status = 200;
    ctx.body = null;
    ctx.status = 200;
  });

  return router;
}
