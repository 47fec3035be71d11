/** Sign-in with an access token (kept in sessionStorage only). */
import { useState } from 'preact/hooks';
import { Message } from '../components/message';

export function SignInPage(props: { error: string | undefined; onSignIn(token: string): void }) {
  const [token, setTokenText] = useState('');
  return (
    <main id="main" class="sign-in">
      <h1>Endpoint Control Console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) props.onSignIn(token.trim());
        }}
      >
        <label for="token">Access token</label>
        <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setTokenText((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Sign in</button>
      </form>
      <Message kind="error" text={props.error} testId="sign-in-error" />
      <p class="note">
        The token stays in this tab's session storage and is sent only to this service. Mint one as the README's "The first token" says (an admin
        or reader token of your organization).
      </p>
    </main>
  );
}
