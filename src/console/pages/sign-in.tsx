/** Sign-in: single sign-on through the identity provider when the service offers it, and an access token (kept in sessionStorage only). */
import { useState } from 'preact/hooks';
import { Message } from '../components/message';
import type { SignInMethods } from '../services/session';

export function SignInPage(props: { error: string | undefined; notice?: string; methods: SignInMethods; ssoUrl: string; onSignIn(token: string): void }) {
  const [token, setTokenText] = useState('');
  return (
    <main id="main" class="sign-in">
      <h1>Endpoint Control Console</h1>
      <Message kind="notice" text={props.notice} testId="sign-in-notice" />
      {props.methods.sso && (
        <p>
          <a class="button" id="sso-sign-in" href={props.ssoUrl}>
            Sign in with single sign-on
          </a>
        </p>
      )}
      {props.methods.token && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (token.trim()) props.onSignIn(token.trim());
          }}
        >
          <label for="token">{props.methods.sso ? 'Or with an access token (service accounts, break-glass)' : 'Access token'}</label>
          <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setTokenText((e.currentTarget as HTMLInputElement).value)} />
          <button type="submit">Sign in</button>
        </form>
      )}
      <Message kind="error" text={props.error} testId="sign-in-error" />
      {props.methods.token && (
        <p class="note">
          A token stays in this tab's session storage and is sent only to this service. Mint one as the README's "The first token" says (an admin
          or reader token of your organization).
        </p>
      )}
    </main>
  );
}
