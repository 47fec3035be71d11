import { expect } from 'chai';
import { DEVELOPMENT_INSTALLER_SIGNING_KEY, loadConfig } from '../../src/config.js';
import { assertStartableConfig } from '../../src/start-checks.js';

describe('start-up checks: development mode and the installer signing key', () => {
  it('a run on the managed local node (no ELASTICSEARCH_URL) is a development run; one against a cluster is not', () => {
    expect(loadConfig({}).development).to.equal(true);
    expect(loadConfig({ ELASTICSEARCH_URL: 'http://es.internal:9200' }).development).to.equal(false);
    expect(loadConfig({ ELASTICSEARCH_URL: 'http://es.internal:9200', ECS_DEVELOPMENT: 'true' }).development).to.equal(
      true,
    );
    expect(loadConfig({ ECS_DEVELOPMENT: 'false' }).development).to.equal(false);
  });

  it('refuses the development key outside development mode, naming ECS_INSTALLER_SIGNING_KEY', () => {
    const cluster = { ELASTICSEARCH_URL: 'http://es.internal:9200' };
    expect(() => assertStartableConfig(loadConfig(cluster))).to.throw(/ECS_INSTALLER_SIGNING_KEY/);
    // Naming the development key explicitly is no better than leaving the variable unset.
    expect(() =>
      assertStartableConfig(loadConfig({ ...cluster, ECS_INSTALLER_SIGNING_KEY: DEVELOPMENT_INSTALLER_SIGNING_KEY })),
    ).to.throw(/ECS_INSTALLER_SIGNING_KEY/);
  });

  it('accepts a key of its own anywhere, and the development key in development mode', () => {
    const cluster = { ELASTICSEARCH_URL: 'http://es.internal:9200' };
    expect(() =>
      assertStartableConfig(loadConfig({ ...cluster, ECS_INSTALLER_SIGNING_KEY: 'a-real-secret-of-32-characters!!' })),
    ).not.to.throw();
    expect(() => assertStartableConfig(loadConfig({ ...cluster, ECS_DEVELOPMENT: 'true' }))).not.to.throw();
    expect(() => assertStartableConfig(loadConfig({}))).not.to.throw();
  });
});
