/** Single sign-on's start-up: an identity provider that does not answer stops the service with one sentence naming the variable. */
import { expect } from 'chai';
import { startTestApp } from '../helpers/app.js';
import { freePort } from '../../src/dev/local-elasticsearch.js';
import { loadConfig } from '../../src/config.js';

describe('Single sign-on configuration', () => {
  it('refuses to start when ECS_OIDC_ISSUER does not answer its discovery document', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}/realms/nowhere`;
    let err: Error | undefined;
    await startTestApp({ ECS_OIDC_ISSUER: issuer, ECS_OIDC_CLIENT_ID: 'ecs', ECS_OIDC_CLIENT_SECRET: 's', ECS_PUBLIC_URL: 'http://127.0.0.1:1' }).then(
      async (app) => app.close(),
      (e: unknown) => (err = e as Error),
    );
    expect(err?.message).to.match(/^cannot use the identity provider: ECS_OIDC_ISSUER=http:\/\/127\.0\.0\.1:\d+\/realms\/nowhere did not answer/);
  });

  it('names what single sign-on lacks', () => {
    expect(() => loadConfig({ ECS_OIDC_ISSUER: 'https://idp.example.com' })).to.throw(/ECS_OIDC_CLIENT_ID/);
    expect(loadConfig({}).oidc).to.equal(undefined);
  });
});
