/** The console's shell: sign-in, the scope picker, navigation and hash routes to the pages. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { OrgPicker, treeOrder } from './components/org-picker';
import { Message } from './components/message';
import { describeError, onUnauthorized } from './services/client';
import { getOrganizationTree, type OrganizationNode } from './services/organizations';
import type { Scope } from './services/scope';
import { clearToken, endPersonSession, getPersonSession, getSignInMethods, getToken, setToken, ssoLoginUrl, type PersonSession, type SignInMethods } from './services/session';
import { AuditPage } from './pages/audit';
import { JobsPage } from './pages/jobs';
import { RolloutsPage } from './pages/rollouts';
import { EndpointDetailPage } from './pages/endpoint-detail';
import { EndpointsPage, type Family } from './pages/endpoints';
import { OrganizationPage } from './pages/organization';
import { OverviewPage } from './pages/overview';
import { SignInPage } from './pages/sign-in';
import { SoftwarePage } from './pages/software';

type Route = { page: 'overview' } | { page: 'endpoints'; family: Family } | { page: 'endpoint'; id: string } | { page: 'software' } | { page: 'organization' } | { page: 'jobs' } | { page: 'rollouts' } | { page: 'audit' };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'endpoints') return { page: 'endpoints', family: parts[1] === 'utm' || parts[1] === 'lte' ? parts[1] : 'agents' };
  if (parts[0] === 'endpoint' && parts[1]) return { page: 'endpoint', id: decodeURIComponent(parts[1]) };
  if (parts[0] === 'software') return { page: 'software' };
  if (parts[0] === 'organization') return { page: 'organization' };
  if (parts[0] === 'jobs') return { page: 'jobs' };
  if (parts[0] === 'rollouts') return { page: 'rollouts' };
  if (parts[0] === 'audit') return { page: 'audit' };
  return { page: 'overview' };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => {
      setRoute(parseRoute(location.hash));
      // Move focus to the new view's heading so keyboard and screen-reader users land on it.
      requestAnimationFrame(() => document.querySelector<HTMLElement>('main h2')?.focus());
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function App() {
  const [signedIn, setSignedIn] = useState(() => getToken() !== undefined);
  const [signInError, setSignInError] = useState<string | undefined>();
  const [signInNotice, setSignInNotice] = useState<string | undefined>();
  const [methods, setMethods] = useState<SignInMethods | undefined>();
  const [person, setPerson] = useState<PersonSession | undefined>();
  const [checked, setChecked] = useState(() => getToken() !== undefined);
  const [orgs, setOrgs] = useState<OrganizationNode[] | undefined>();
  const [treeError, setTreeError] = useState<string | undefined>();
  const [orgId, setOrgId] = useState<string | undefined>();
  const [includeChildren, setIncludeChildren] = useState(true);
  const route = useRoute();

  const signOut = (message?: string, notice?: string) => {
    clearToken();
    setSignedIn(false);
    setPerson(undefined);
    setOrgs(undefined);
    setOrgId(undefined);
    setSignInError(message);
    setSignInNotice(notice);
  };

  // A 401 while signed in through single sign-on is the end of the login session: back to sign-in, then back here.
  useEffect(
    () =>
      onUnauthorized((e) => {
        if (getToken() === undefined) signOut(undefined, 'Your session has ended. Sign in again to continue where you were.');
        else signOut(describeError(e));
      }),
    [],
  );

  useEffect(() => {
    void getSignInMethods().then(setMethods);
    if (getToken() !== undefined) return;
    void getPersonSession().then((s) => {
      setPerson(s);
      if (s) setSignedIn(true);
      setChecked(true);
    });
  }, []);

  const endSession = async () => {
    if (person) {
      const idpLogout = await endPersonSession();
      signOut(undefined, 'Signed out.');
      if (idpLogout) location.assign(idpLogout);
      return;
    }
    signOut();
  };

  useEffect(() => {
    if (!signedIn) return;
    setTreeError(undefined);
    getOrganizationTree().then(
      (t) => {
        setOrgs(t.organizations);
        const first = treeOrder(t.organizations)[0];
        setOrgId((cur) => cur ?? first?.org.id);
      },
      (e: unknown) => setTreeError(describeError(e)),
    );
  }, [signedIn]);

  const entries = useMemo(() => treeOrder(orgs ?? []), [orgs]);
  // Write controls follow the person's grants (an admin grant above the organization); a token's
  // role is not known to the page, so it sees them and the service answers 403 where it may not.
  const canWriteIn = useMemo(() => {
    if (!person) return () => true;
    const parent = new Map((orgs ?? []).map((o) => [o.id, o.parentId]));
    const admin = new Set(person.grants.filter((g) => g.role === 'admin' && g.orgId).map((g) => g.orgId));
    const system = person.grants.some((g) => g.role === 'system');
    return (orgId: string): boolean => {
      if (system) return true;
      for (let at: string | undefined = orgId; at !== undefined; at = parent.get(at)) if (admin.has(at)) return true;
      return false;
    };
  }, [person, orgs]);
  const scope: Scope | undefined = useMemo(() => {
    if (!orgId || !orgs) return undefined;
    const at = entries.findIndex((e) => e.org.id === orgId);
    const subtree: string[] = [];
    if (at >= 0) {
      subtree.push(orgId);
      for (let i = at + 1; i < entries.length && entries[i].depth > entries[at].depth; i++) subtree.push(entries[i].org.id);
    }
    const roots = entries.filter((e) => e.depth === 0);
    return { orgId, includeChildren, subtree, coversAll: includeChildren && roots.length === 1 && roots[0].org.id === orgId };
  }, [orgId, includeChildren, entries]);

  if (!signedIn) {
    if (!checked || !methods) return <main id="main" class="sign-in" aria-busy="true" />;
    return (
      <SignInPage
        error={signInError}
        notice={signInNotice}
        methods={methods}
        ssoUrl={ssoLoginUrl()}
        onSignIn={(token) => {
          setToken(token);
          setSignInError(undefined);
          setSignedIn(true);
        }}
      />
    );
  }

  const nav: [string, string, boolean][] = [
    ['#/overview', 'Overview', route.page === 'overview'],
    ['#/endpoints/agents', 'Endpoints', route.page === 'endpoints' || route.page === 'endpoint'],
    ['#/software', 'Software', route.page === 'software'],
    ['#/organization', 'Organization', route.page === 'organization'],
    ['#/jobs', 'Jobs', route.page === 'jobs'],
    ['#/rollouts', 'Rollouts', route.page === 'rollouts'],
    ['#/audit', 'Audit', route.page === 'audit'],
  ];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <h1>Endpoint Control Console</h1>
        <nav aria-label="Main">
          {nav.map(([href, label, current]) => (
            <a key={href} href={href} aria-current={current ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {orgs && orgId && <OrgPicker entries={entries} orgId={orgId} includeChildren={includeChildren} onChange={(o, c) => (setOrgId(o), setIncludeChildren(c))} />}
        {person && (
          <span class="who" data-testid="signed-in-as" title={person.email}>
            {person.name}
          </span>
        )}
        <button type="button" id="sign-out" onClick={() => void endSession()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Message kind="error" text={treeError} testId="tree-error" />
        {orgs && orgs.length === 0 && <Message kind="error" text={person ? 'Your grants cover no organization known to this service.' : 'Your token sees no organization.'} />}
        {scope && route.page === 'overview' && <OverviewPage scope={scope} />}
        {scope && route.page === 'endpoints' && <EndpointsPage scope={scope} family={route.family} canWrite={canWriteIn(scope.orgId)} />}
        {route.page === 'endpoint' && <EndpointDetailPage id={route.id} canWriteIn={canWriteIn} />}
        {scope && route.page === 'software' && <SoftwarePage scope={scope} />}
        {scope && route.page === 'organization' && <OrganizationPage orgId={scope.orgId} canWrite={canWriteIn(scope.orgId)} />}
        {scope && route.page === 'jobs' && <JobsPage scope={scope} canWrite={canWriteIn(scope.orgId)} />}
        {scope && route.page === 'rollouts' && <RolloutsPage scope={scope} canWriteIn={canWriteIn} />}
        {route.page === 'audit' && <AuditPage />}
      </main>
    </>
  );
}
