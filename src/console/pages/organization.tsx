/** The selected organization: its bundle subscriptions and installer download links. */
import { useEffect, useState } from 'preact/hooks';
import { Message } from '../components/message';
import { describeError } from '../services/client';
import { installerUrl, PLATFORMS, type Platform } from '../services/installer';
import { listBundles, listOrgBundles, subscribeBundle, unsubscribeBundle, type Bundle } from '../services/modules';

export function OrganizationPage(props: { orgId: string; canWrite: boolean }) {
  const { orgId } = props;
  const [catalogue, setCatalogue] = useState<Bundle[] | undefined>();
  const [subscribed, setSubscribed] = useState<Set<string> | undefined>();
  const [links, setLinks] = useState<Partial<Record<Platform, string>>>({});
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const reload = () =>
    Promise.all([listBundles(), listOrgBundles(orgId)]).then(
      ([all, mine]) => {
        setCatalogue(all);
        setSubscribed(new Set(mine.map((b) => b.id)));
      },
      (e: unknown) => setError(describeError(e)),
    );
  useEffect(() => {
    setError(undefined);
    setNotice(undefined);
    void reload();
  }, [orgId]);
  const toggle = async (b: Bundle, on: boolean) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await (on ? subscribeBundle(orgId, b.id) : unsubscribeBundle(orgId, b.id));
      setNotice(`${on ? 'Subscribed to' : 'Unsubscribed from'} ${b.name}.`);
      await reload();
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <section id="organization" aria-labelledby="organization-title">
      <h2 id="organization-title" tabIndex={-1}>
        Organization {orgId}
      </h2>
      <Message kind="error" text={error} testId="organization-error" />
      <Message kind="notice" text={notice} />
      <section class="panel" aria-labelledby="bundles-title">
        <h3 id="bundles-title">Bundles</h3>
        <table class="data compact">
          <thead>
            <tr>
              <th scope="col">Bundle</th>
              <th scope="col">Modules</th>
              <th scope="col">Subscribed</th>
            </tr>
          </thead>
          <tbody>
            {catalogue?.map((b) => {
              const on = subscribed?.has(b.id) ?? false;
              return (
                <tr key={b.id} data-bundle={b.id} data-subscribed={String(on)}>
                  <td>{b.name}</td>
                  <td>{b.modules.join(', ')}</td>
                  <td>
                    {on ? 'yes' : 'no'}{' '}
                    {props.canWrite && (
                      <button type="button" onClick={() => void toggle(b, !on)}>
                        {on ? `Unsubscribe ${b.name}` : `Subscribe ${b.name}`}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
      <section class="panel" aria-labelledby="installer-title">
        <h3 id="installer-title">Installers</h3>
        <ul class="installers">
          {PLATFORMS.map((p) => (
            <li key={p}>
              <button type="button" onClick={() => installerUrl(p).then((u) => setLinks({ ...links, [p]: u }), (e: unknown) => setError(describeError(e)))}>
                Get {p} installer link
              </button>{' '}
              {links[p] && /^https?:\/\//.test(links[p] ?? "") && (
                <a href={links[p]} data-installer={p} rel="noopener noreferrer">
                  Download for {p}
                </a>
              )}
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
