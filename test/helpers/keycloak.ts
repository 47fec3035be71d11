/**
 * The run's Keycloak (src/dev/local-keycloak.ts) with the repository's realm
 * (data/keycloak/ecs-realm.json), started on first use and stopped after the whole run
 * (test/setup.ts), and the parts of its admin API the single sign-on tests drive.
 */
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

export class KeycloakAdmin {
  constructor(private readonly kc: LocalKeycloak) {}

  get issuer(): string {
    return `${this.kc.url}/realms/${REALM}`;
  }

  private async token(): Promise<string> {
    const res = await fetch(`${this.kc.url}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: 'admin-cli', grant_type: 'password', ...this.kc.admin }),
    });
    if (!res.ok) throw new Error(`Keycloak admin token: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.kc.url}/admin/realms/${REALM}${path}`, {
      method,
      headers: { authorization: `Bearer ${await this.token()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** Points the realm's client at the service under test (redirect URI, back-channel logout URL). */
  async aimClient(publicUrl: string): Promise<void> {
    const found = await this.call<{ id: string; attributes: Record<string, string> }[]>('GET', `/clients?clientId=${CLIENT_ID}`);
    const client = found.body[0];
    const res = await this.call('PUT', `/clients/${client.id}`, {
      ...client,
      secret: CLIENT_SECRET,
      redirectUris: [`${publicUrl}/auth/callback`],
      webOrigins: [publicUrl],
      attributes: {
        ...client.attributes,
        'backchannel.logout.url': `${publicUrl}/auth/backchannel-logout`,
        'post.logout.redirect.uris': `${publicUrl}/console`,
      },
    });
    if (res.status !== 204) throw new Error(`aiming the client: ${res.status} ${JSON.stringify(res.body)}`);
  }

  async userId(username: string): Promise<string> {
    const res = await this.call<{ id: string }[]>('GET', `/users?username=${encodeURIComponent(username)}&exact=true`);
    return res.body[0].id;
  }

  /** Signs the user out of every Keycloak session: Keycloak sends back-channel logout tokens to the clients. */
  async logoutUser(username: string): Promise<void> {
    const res = await this.call('POST', `/users/${await this.userId(username)}/logout`);
    if (res.status !== 204) throw new Error(`logging out ${username}: ${res.status}`);
  }
}
