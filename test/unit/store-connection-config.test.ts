import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createClient } from '../../src/store/client.js';

const fingerprint = 'AB:'.repeat(31) + 'CD';

describe('store connection configuration (ELASTICSEARCH_*)', () => {
  it('accepts one or several comma-separated http(s) URLs, and the client gets each as a node', async () => {
    const config = loadConfig({ ELASTICSEARCH_URL: 'https://es1:9200, http://es2:9200' });
    expect(config.elasticsearchUrl).to.equal('https://es1:9200,http://es2:9200');
    const client = createClient(config.elasticsearchUrl ?? '', 1000);
    try {
      expect(client.connectionPool.connections.map((c) => c.url.origin)).to.deep.equal([
        'https://es1:9200',
        'http://es2:9200',
      ]);
    } finally {
      await client.close();
    }
  });

  it('names the URL that is not an http(s) URL', () => {
    expect(() => loadConfig({ ELASTICSEARCH_URL: 'http://es1:9200,ftp://es2' })).to.throw(
      /ELASTICSEARCH_URL.*comma-separated.*"ftp:\/\/es2"/,
    );
    expect(() => loadConfig({ ELASTICSEARCH_URL: 'http://es1:9200,' })).to.throw(/ELASTICSEARCH_URL/);
  });

  it('an API key together with basic credentials is an error naming both', () => {
    expect(() =>
      loadConfig({ ELASTICSEARCH_API_KEY: 'key', ELASTICSEARCH_USERNAME: 'u', ELASTICSEARCH_PASSWORD: 'p' }),
    ).to.throw(/"ELASTICSEARCH_API_KEY" and "ELASTICSEARCH_USERNAME" are both set/);
  });

  it('a username without a password (or the reverse) is an error naming the missing one', () => {
    expect(() => loadConfig({ ELASTICSEARCH_USERNAME: 'u' })).to.throw(
      /ELASTICSEARCH_USERNAME.*without.*ELASTICSEARCH_PASSWORD/,
    );
    expect(() => loadConfig({ ELASTICSEARCH_PASSWORD: 'p' })).to.throw(
      /ELASTICSEARCH_PASSWORD.*without.*ELASTICSEARCH_USERNAME/,
    );
  });

  it('the CA fingerprint must be SHA-256 hex, with or without colons', () => {
    expect(loadConfig({ ELASTICSEARCH_CA_FINGERPRINT: fingerprint }).elasticsearchSecurity.caFingerprint).to.equal(
      fingerprint,
    );
    expect(
      loadConfig({ ELASTICSEARCH_CA_FINGERPRINT: fingerprint.replace(/:/g, '') }).elasticsearchSecurity.caFingerprint,
    ).to.have.length(64);
    expect(() => loadConfig({ ELASTICSEARCH_CA_FINGERPRINT: 'AB:CD' })).to.throw(
      /ELASTICSEARCH_CA_FINGERPRINT.*SHA-256/,
    );
  });

  it('a CA file that cannot be read fails client creation naming ELASTICSEARCH_CA_FILE', () => {
    expect(() => createClient('https://es1:9200', 1000, { caFile: '/nonexistent/ca.pem' })).to.throw(
      /ELASTICSEARCH_CA_FILE: cannot read \/nonexistent\/ca.pem/,
    );
  });
});
