/**
 * The run's Keycloak (src/dev/local-keycloak.ts) with the repository's realm
 * (data/keycloak/ecs-realm.json), started on first use and stopped after the whole run
 * (test/setup.ts), and the parts of its admin API the single sign-on tests drive: people made
 * for one test each, a realm of a test's own, signing a person out at Keycloak.
 */
import crypto from 'node:crypto';
import { DEMO_REALM_FILE, startLocalKeycloak, type LocalKeycloak } from '../../src/dev/local-keycloak.js';

export const REALM = 'ecs';
export const CLIENT_ID = 'ecs';
export const CLIENT_SECRET = 'test-client-secret';

let running: Promise<LocalKeycloak> | undefined;

/** The run's Keycloak (a live one of an earlier run is reused; its client is re-aimed by `aimClient`). */
export function testKeycloak(): Promise<LocalKeycloak> {
  running ??= startLocalKeycloak({
    name: 'test',
    realmFiles: [DEMO_REALM_FILE],
    readyRealm: REALM,
    env: { ECS_PUBLIC_URL: 'http://127.0.0.1:1', ECS_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  });
  return running;
}

/** Stops Keycloak if this run started it. */
export async function stopTestKeycloak(): Promise<void> {
  const r = running;
  running = undefined;
  if (r) await (await r).stop();
}

/** A person at Keycloak, made for one test: nobody else signs in as them. */
export interface Person {
  username: string;
  password: string;
  email: string;
  /** The name the service shows (Keycloak's `name` claim: first and last name). */
  name: string;
}

/** Where the service under test answers, as a Keycloak client must know it. */
export interface ClientAim {
  /** The service's ECS_PUBLIC_URL: its redirect URI, back-channel logout URL and post-logout redirect. */
  publicUrl: string;
  /** Further instances the same client signs people in to (their redirect URIs only). */
  alsoAt?: string[];
}

interface AdminToken {
  value: string;
  until: number;
}

/** Keycloak's admin API, as the master realm's bootstrap administrator, for one realm. */
export class KeycloakAdmin {
  private static tokens = new WeakMap<LocalKeycloak, AdminToken>();

  constructor(
    private readonly kc: LocalKeycloak,
    readonly realm = REALM,
  ) {}

  get issuer(): string {
    return `${this.kc.url}/realms/${this.realm}`;
  }

  private async token(): Promise<string> {
    const cached = KeycloakAdmin.tokens.get(this.kc);
    if (cached && cached.until > Date.now()) return cached.value;
    const res = await fetch(`${this.kc.url}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: 'admin-cli', grant_type: 'password', ...this.kc.admin }),
    });
    if (!res.ok) throw new Error(`Keycloak admin token: ${res.status} ${await res.text()}`);
    const t = (await res.json()) as { access_token: string; expires_in: number };
    // Renewed well before it lapses: a call on a loaded machine may take seconds to arrive.
    KeycloakAdmin.tokens.set(this.kc, { value: t.access_token, until: Date.now() + (t.expires_in * 1000) / 2 });
    return t.access_token;
  }

  /** One admin API call under `/admin/realms` (`realmPath` false) or under this realm. */
  async call<T = unknown>(method: string, path: string, body?: unknown, realmPath = true): Promise<{ status: number; body: T; location?: string }> {
    const res = await fetch(`${this.kc.url}/admin/realms${realmPath ? `/${this.realm}` : ''}${path}`, {
      method,
      headers: { authorization: `Bearer ${await this.token()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, location: res.headers.get('location') ?? undefined };
  }

  private expectStatus(what: string, res: { status: number; body: unknown }, ...ok: number[]): void {
    if (!ok.includes(res.status)) throw new Error(`Keycloak ${what} (realm ${this.realm}): ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** The client's redirect URIs, back-channel logout URL and post-logout redirect for the service under test. */
  static clientUrls(aim: ClientAim): { redirectUris: string[]; webOrigins: string[]; attributes: Record<string, string> } {
    const all = [aim.publicUrl, ...(aim.alsoAt ?? [])];
    return {
      redirectUris: all.map((u) => `${u}/auth/callback`),
      webOrigins: all,
      attributes: {
        'backchannel.logout.url': `${aim.publicUrl}/auth/backchannel-logout`,
        'backchannel.logout.session.required': 'true',
        'post.logout.redirect.uris': `${aim.publicUrl}/console`,
      },
    };
  }

  /** Points the realm's client at the service under test (redirect URIs, back-channel logout URL). */
  async aimClient(aim: ClientAim, clientId = CLIENT_ID, secret = CLIENT_SECRET): Promise<void> {
    const found = await this.call<{ id: string; attributes: Record<string, string> }[]>('GET', `/clients?clientId=${encodeURIComponent(clientId)}`);
    const client = found.body[0];
    const urls = KeycloakAdmin.clientUrls(aim);
    const res = await this.call('PUT', `/clients/${client.id}`, {
      ...client,
      secret,
      redirectUris: urls.redirectUris,
      webOrigins: urls.webOrigins,
      attributes: { ...client.attributes, ...urls.attributes },
    });
    this.expectStatus('aiming the client', res, 204);
  }

  /**
   * Makes a person of this test's own with the given `ecs_roles` values (none: a person without
   * grants), a verified e-mail and a password, so the login page asks nothing more.
   */
  async createPerson(roles: string[], label = 'person'): Promise<Person> {
    const username = `${label}-${crypto.randomBytes(4).toString('hex')}`;
    const person: Person = { username, password: `${username}-pw`, email: `${username}@people.example`, name: `${label} ${username.slice(-8)}` };
    const res = await this.call('POST', '/users', {
      username,
      email: person.email,
      emailVerified: true,
      firstName: label,
      lastName: username.slice(-8),
      enabled: true,
      credentials: [{ type: 'password', value: person.password, temporary: false }],
      ...(roles.length > 0 ? { attributes: { ecs_roles: roles } } : {}),
    });
    this.expectStatus(`creating ${username}`, res, 201);
    return person;
  }

  async userId(username: string): Promise<string> {
    const res = await this.call<{ id: string }[]>('GET', `/users?username=${encodeURIComponent(username)}&exact=true`);
    if (res.body.length !== 1) throw new Error(`Keycloak has no user ${username} in realm ${this.realm}`);
    return res.body[0].id;
  }

  /** Changes a person the way an administrator does in the admin console: the whole representation, read and written back. */
  private async updatePerson(username: string, change: (rep: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
    const id = await this.userId(username);
    const rep = await this.call<Record<string, unknown>>('GET', `/users/${id}`);
    this.expectStatus(`reading ${username}`, rep, 200);
    this.expectStatus(`updating ${username}`, await this.call('PUT', `/users/${id}`, change(rep.body)), 204);
  }

  /** Disables the person: Keycloak keeps their sessions and sends no logout (only a refresh is refused). */
  async disablePerson(username: string): Promise<void> {
    await this.updatePerson(username, (rep) => ({ ...rep, enabled: false }));
  }

  /** Replaces the person's `ecs_roles` values. */
  async setRoles(username: string, roles: string[]): Promise<void> {
    await this.updatePerson(username, (rep) => ({ ...rep, attributes: { ...(rep.attributes as Record<string, string[]> | undefined), ecs_roles: roles } }));
  }

  /** Signs the person out of every Keycloak session: Keycloak sends back-channel logout tokens to the clients. */
  async logoutUser(username: string): Promise<void> {
    this.expectStatus(`logging out ${username}`, await this.call('POST', `/users/${await this.userId(username)}/logout`), 204);
  }

  /**
   * A new realm on the same Keycloak, made the way an administrator would through the admin
   * API: the realm, a user profile attribute `ecs_roles` (multivalued), a confidential client
   * with PKCE, its back-channel logout URL, and a mapper of the attribute to the claim
   * `claimName` in the ID token or in userinfo only.
   */
  async createRealm(opts: { realm: string; clientId: string; clientSecret: string; aim: ClientAim; claimName: string; claimIn: 'idToken' | 'userinfo' }): Promise<KeycloakAdmin> {
    this.expectStatus('creating a realm', await this.call('POST', '', { realm: opts.realm, enabled: true }, false), 201);
    const realm = new KeycloakAdmin(this.kc, opts.realm);
    const profile = await realm.call<{ attributes: { name: string }[] }>('GET', '/users/profile');
    realm.expectStatus('reading the user profile', profile, 200);
    const attribute = { name: 'ecs_roles', displayName: 'Endpoint Control Service grants', multivalued: true, permissions: { view: ['admin'], edit: ['admin'] } };
    realm.expectStatus('adding ecs_roles to the user profile', await realm.call('PUT', '/users/profile', { ...profile.body, attributes: [...profile.body.attributes, attribute] }), 200);
    const urls = KeycloakAdmin.clientUrls(opts.aim);
    const client = await realm.call('POST', '/clients', {
      clientId: opts.clientId,
      protocol: 'openid-connect',
      publicClient: false,
      clientAuthenticatorType: 'client-secret',
      secret: opts.clientSecret,
      standardFlowEnabled: true,
      directAccessGrantsEnabled: false,
      frontchannelLogout: false,
      redirectUris: urls.redirectUris,
      webOrigins: urls.webOrigins,
      attributes: { ...urls.attributes, 'pkce.code.challenge.method': 'S256' },
      protocolMappers: [
        {
          name: 'ecs_roles',
          protocol: 'openid-connect',
          protocolMapper: 'oidc-usermodel-attribute-mapper',
          config: {
            'user.attribute': 'ecs_roles',
            'claim.name': opts.claimName,
            'jsonType.label': 'String',
            multivalued: 'true',
            'id.token.claim': String(opts.claimIn === 'idToken'),
            'access.token.claim': 'false',
            'userinfo.token.claim': 'true',
          },
        },
      ],
    });
    realm.expectStatus(`creating the client ${opts.clientId}`, client, 201);
    return realm;
  }

  /** Deletes this realm (its people and sessions with it). */
  async deleteRealm(): Promise<void> {
    this.expectStatus('deleting the realm', await this.call('DELETE', ''), 204, 404);
  }
}
