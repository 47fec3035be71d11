/** Refresh tokens of login sessions at rest: sealed for the store, bound to their person. */
import crypto from 'node:crypto';
import type { SessionDoc } from '../resources/sessions/model.js';

/** What a sealed refresh token is bound to: the person it was issued for. */
const boundTo = (person: Pick<SessionDoc, 'issuer' | 'subject'>): Buffer => Buffer.from(`${person.issuer} ${person.subject}`);

/**
 * Refresh tokens at rest: AES-256-GCM under a key derived from the client secret (a refresh
 * token is of no use without it anyway), bound to the person it was issued for, so a copy of
 * the sessions index yields nothing and a sealed token cannot be moved to another session.
 */
export class RefreshTokenSeal {
  private readonly key: Buffer;

  constructor(clientSecret: string) {
    this.key = Buffer.from(crypto.hkdfSync('sha256', clientSecret, 'ecs', 'login session refresh token', 32));
  }

  seal(token: string, person: Pick<SessionDoc, 'issuer' | 'subject'>): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv).setAAD(boundTo(person));
    const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The token, or undefined when it was sealed under another client secret or for another person. */
  open(sealed: string, person: Pick<SessionDoc, 'issuer' | 'subject'>): string | undefined {
    const [version, iv, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !body) return undefined;
    const data = Buffer.from(body, 'base64url');
    if (data.length < 16) return undefined;
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url')).setAAD(boundTo(person));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
