/**
 * `npm run dev:idp`: a local Keycloak with the demo realm (data/keycloak/ecs-realm.json: client
 * `ecs`, people alice, rita, max and nora), and the environment to start the service with, so
 * `npm start` plus this one command shows single sign-on working (docs/sso.md). Ctrl-C stops it.
 */
import crypto from 'node:crypto';
import { DEMO_REALM_FILE, startLocalKeycloak } from './local-keycloak.js';

const servicePort = Number(process.env.PORT ?? 8080);
const publicUrl = (process.env.ECS_PUBLIC_URL ?? `http://localhost:${servicePort}`).replace(/\/+$/, '');
const clientSecret = process.env.ECS_OIDC_CLIENT_SECRET ?? crypto.randomBytes(18).toString('base64url');
const adminToken = process.env.ECS_ADMIN_TOKEN ?? crypto.randomBytes(24).toString('hex');

const kc = await startLocalKeycloak({
  name: 'dev',
  port: Number(process.env.ECS_DEV_IDP_PORT ?? 8180),
  realmFiles: [DEMO_REALM_FILE],
  readyRealm: 'ecs',
  env: { ECS_PUBLIC_URL: publicUrl, ECS_OIDC_CLIENT_SECRET: clientSecret },
  log: (l) => process.stdout.write(`${l}\n`),
});
const api = `${publicUrl}/endpoint-control-service/v1`;
process.stdout.write(
  [
    '',
    `Keycloak is up: ${kc.url} (admin console: ${kc.url}/admin, user ${kc.admin.username}, password ${kc.admin.password})`,
    '',
    'Start the service with:',
    '',
    `  ECS_OIDC_ISSUER=${kc.url}/realms/ecs ECS_OIDC_CLIENT_ID=ecs ECS_OIDC_CLIENT_SECRET=${clientSecret} \\`,
    `  ECS_PUBLIC_URL=${publicUrl} ECS_ADMIN_TOKEN=${adminToken} PORT=${servicePort} npm start`,
    '',
    'then create the demo organizations the realm grants roles in:',
    '',
    `  for o in acme beta; do curl -s -X POST ${api}/admin/organizations -H "x-auth-token: ${adminToken}" \\`,
    `    -H 'content-type: application/json' -d "{\\"id\\":\\"$o\\",\\"name\\":\\"$o\\"}"; done`,
    '',
    `and open ${publicUrl}/console → "Sign in with single sign-on" as one of:`,
    '  alice / alice-password   admin of acme',
    '  rita  / rita-password    reader of acme',
    '  max   / max-password     admin of acme, reader of beta',
    '  nora  / nora-password    no grant (refused)',
    '',
    'Ctrl-C stops Keycloak.',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  if (kc.started) await kc.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
if (!kc.started) process.stdout.write('(that Keycloak was already running; it keeps running)\n');
setInterval(() => undefined, 1 << 30);
