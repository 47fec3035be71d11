import { expect } from 'chai';
import { signInstallerUrl, verifyInstallerUrl } from '../../src/resources/installer/signing.js';

const KEY = 'unit-test-signing-key-0123456789';
const NOW = Date.parse('2030-06-01T12:00:00Z');

describe('signed installer URLs', () => {
  const url = signInstallerUrl('https://dl.example.test/base/', ['windows', 'v3.10.2', 'agent v3.10.2.msi'], KEY, 600, NOW);

  it('puts the file below the base URL with an expiry and a signature', () => {
    const u = new URL(url);
    expect(u.origin + u.pathname).to.equal('https://dl.example.test/base/windows/v3.10.2/agent%20v3.10.2.msi');
    expect(u.searchParams.get('expires')).to.equal(String(NOW / 1000 + 600));
    expect(u.searchParams.get('signature')).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('verifies with the key until the expiry, and reports the path and expiry', () => {
    const ok = verifyInstallerUrl(url, KEY, NOW);
    expect(ok).to.deep.equal({
      valid: true,
      path: '/base/windows/v3.10.2/agent%20v3.10.2.msi',
      expiresAt: new Date(NOW + 600_000),
    });
    expect(verifyInstallerUrl(url, KEY, NOW + 599_999).valid).to.equal(true);
  });

  it('refuses it at and after the expiry', () => {
    expect(verifyInstallerUrl(url, KEY, NOW + 600_000)).to.deep.equal({ valid: false, reason: 'expired' });
    expect(verifyInstallerUrl(url, KEY, NOW + 10 * 600_000)).to.deep.equal({ valid: false, reason: 'expired' });
  });

  it('refuses another key, another path, another expiry and a changed signature', () => {
    expect(verifyInstallerUrl(url, `${KEY}x`, NOW)).to.deep.equal({ valid: false, reason: 'bad-signature' });
    expect(verifyInstallerUrl(url.replace('/windows/', '/linux/'), KEY, NOW)).to.deep.equal({ valid: false, reason: 'bad-signature' });
    const later = new URL(url);
    later.searchParams.set('expires', String(NOW / 1000 + 6000));
    expect(verifyInstallerUrl(later.toString(), KEY, NOW)).to.deep.equal({ valid: false, reason: 'bad-signature' });
    const forged = new URL(url);
    const sig = forged.searchParams.get('signature') as string;
    forged.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect(verifyInstallerUrl(forged.toString(), KEY, NOW)).to.deep.equal({ valid: false, reason: 'bad-signature' });
    forged.searchParams.set('signature', sig.slice(1));
    expect(verifyInstallerUrl(forged.toString(), KEY, NOW)).to.deep.equal({ valid: false, reason: 'bad-signature' });
  });

  it('refuses malformed URLs', () => {
    expect(verifyInstallerUrl('not a url', KEY, NOW)).to.deep.equal({ valid: false, reason: 'malformed' });
    const noSig = new URL(url);
    noSig.searchParams.delete('signature');
    expect(verifyInstallerUrl(noSig.toString(), KEY, NOW)).to.deep.equal({ valid: false, reason: 'malformed' });
    const badExpiry = new URL(url);
    badExpiry.searchParams.set('expires', '1e12');
    expect(verifyInstallerUrl(badExpiry.toString(), KEY, NOW)).to.deep.equal({ valid: false, reason: 'malformed' });
  });
});
