import { expect } from 'chai';
import { canonicalVersion, latestVersion } from '../../src/resources/client-versions/semver.js';
import { parseConfiguredDefaults } from '../../src/resources/client-versions/service.js';

describe('agent version strings', () => {
  it('canonicalises to a v-prefixed semantic version', () => {
    expect(canonicalVersion('1.2.3')).to.equal('v1.2.3');
    expect(canonicalVersion('v1.2.3')).to.equal('v1.2.3');
    expect(canonicalVersion(' v10.0.1-rc.1 ')).to.equal('v10.0.1-rc.1');
  });
  it('rejects what is not a semantic version', () => {
    for (const bad of ['', 'v', '1.2', 'latest', 'vv1.2.3', '1.2.3.4', '=1.2.3', 'x1.2.3']) {
      expect(canonicalVersion(bad), bad).to.equal(undefined);
    }
  });
  it('picks the highest version by semantic order, not string order', () => {
    expect(latestVersion(['v3.9.0', 'v3.10.0', 'v3.2.0'])).to.equal('v3.10.0');
    expect(latestVersion(['v3.10.0-rc.1', 'v3.10.0'])).to.equal('v3.10.0');
    expect(latestVersion(['junk'])).to.equal(undefined);
  });
  it('parses configured defaults per OS and refuses unknown systems', () => {
    expect(parseConfiguredDefaults('linux=1.0.0, windows=v2.0.0')).to.deep.equal({ linux: 'v1.0.0', windows: 'v2.0.0' });
    expect(() => parseConfiguredDefaults('solaris=1.0.0')).to.throw(/solaris/);
    expect(() => parseConfiguredDefaults('linux=abc')).to.throw(/abc/);
  });
});
