/**
 * The ops commands about who may do what: organizations and tokens (`admin`, the admin
 * operations as the system role) and people's login sessions (`sessions`, docs/adr/0077-operators-end-sessions.md).
 */
import { ROLES, type Role } from '../access/principal.js';
import { EXIT, UsageError, flag, fmt, onlyFlags, type CliIo, type Parsed, type Runtime } from './ops-runtime.js';

function expiresAt(p: Parsed): Date | undefined {
  const expires = flag(p, 'expires');
  const at = expires ? new Date(expires) : undefined;
  if (at && (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()))
    throw new UsageError('--expires must be an ISO date in the future');
  return at;
}

export function checkAdmin(p: Parsed): void {
  const [, what, verb, ...rest] = p.positional;
  const sub = `${what ?? ''} ${verb ?? ''}`;
  if (sub === 'org create' && rest.length < 2) throw new UsageError('admin org create <id> <name> [--parent <orgId>]');
  else if (sub === 'org show' && rest.length !== 1) throw new UsageError('admin org show <id>');
  else if (sub === 'token create') {
    const role = flag(p, 'role') as Role | undefined;
    if (!role || !ROLES.includes(role) || rest.length !== 0) {
      throw new UsageError(
        'admin token create --role system|admin|reader|agent [--org <orgId>] [--endpoint <id>] [--name <name>] [--expires <ISO date>]',
      );
    }
    expiresAt(p);
  } else if (sub === 'token revoke' && rest.length !== 1) throw new UsageError('admin token revoke <tokenId>');
  else if (!['org create', 'org show', 'token create', 'token revoke'].includes(sub)) {
    throw new UsageError('admin org create|show, admin token create|revoke');
  }
  const takes: Record<string, string[]> = {
    'org create': ['parent'],
    'org show': [],
    'token create': ['role', 'org', 'endpoint', 'name', 'expires'],
    'token revoke': [],
  };
  onlyFlags(p, `admin ${sub}`, takes[sub]);
}

export async function admin(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const [, what, verb, ...rest] = p.positional;
  const print = (v: unknown): void => void io.out.write(`${JSON.stringify(v, null, 2)}\n`);
  if (what === 'org' && verb === 'create') {
    const [id, ...name] = rest;
    const parentId = flag(p, 'parent');
    print(await rt.services.orgs.create({ id, name: name.join(' '), ...(parentId ? { parentId } : {}) }, rt.access));
    return EXIT.ok;
  }
  if (what === 'org' && verb === 'show') {
    print(await rt.services.orgs.get(rest[0], rt.access));
    return EXIT.ok;
  }
  if (what === 'token' && verb === 'create') {
    const role = flag(p, 'role') as Role;
    const expires = expiresAt(p);
    const orgId = flag(p, 'org');
    const endpointId = flag(p, 'endpoint');
    print(
      await rt.services.tokens.create(
        {
          name: flag(p, 'name') ?? `${role}${orgId ? `-${orgId}` : ''}`,
          role,
          ...(orgId ? { orgId } : {}),
          ...(endpointId ? { endpointId } : {}),
          ...(expires ? { expiresAt: expires } : {}),
        },
        rt.access,
      ),
    );
    return EXIT.ok;
  }
  if (what === 'token' && verb === 'revoke') {
    await rt.services.tokens.revoke(rest[0], rt.access);
    io.out.write(`revoked token ${rest[0]}\n`);
    return EXIT.ok;
  }
  throw new UsageError('admin org create|show, admin token create|revoke');
}

export function checkSessions(p: Parsed): void {
  const [, verb, ...rest] = p.positional;
  const who = ['email', 'subject', 'all'].filter((k) => p.flags.has(k));
  // `onlyFlags` names a flag the verb does not take (`list --all`).
  if (verb === 'list' && rest.length === 0 && who.length <= 1) {
    onlyFlags(p, 'sessions list', ['email', 'subject', 'json']);
    return;
  }
  if (verb === 'end' && rest.length === 0 && who.length === 1) {
    onlyFlags(p, 'sessions end', ['email', 'subject', 'all', 'json']);
    return;
  }
  throw new UsageError(
    'sessions list [--email <e-mail> | --subject <sub>], sessions end --email <e-mail> | --subject <sub> | --all',
  );
}

export async function sessionsCommand(rt: Runtime, p: Parsed, io: CliIo): Promise<number> {
  const verb = p.positional[1];
  const email = flag(p, 'email');
  const subject = flag(p, 'subject');
  const found = await rt.services.sessions.list({
    ...(email !== undefined ? { email } : {}),
    ...(subject !== undefined ? { subject } : {}),
  });
  // A session is named as in the audit trail: the first 16 characters of its hash.
  const rows = found.map((s) => ({
    id: s.hash.slice(0, 16),
    subject: s.doc.subject,
    issuer: s.doc.issuer,
    ...(s.doc.email ? { email: s.doc.email } : {}),
    ...(s.doc.name ? { name: s.doc.name } : {}),
    grants: s.doc.grants.map((g) => `${g.role}@${g.orgId ?? '*'}`),
    createdAt: s.doc.createdAt,
    lastSeenAt: s.doc.lastSeenAt,
    expiresAt: s.expiresAt,
  }));
  if (verb === 'list') {
    if (p.flags.has('json')) io.out.write(`${JSON.stringify({ command: 'sessions list', sessions: rows })}\n`);
    else {
      for (const r of rows)
        io.out.write(
          `${r.id}  ${r.name ?? r.email ?? r.subject}  ${r.grants.join(',')}  since ${r.createdAt}  last use ${r.lastSeenAt}  ends ${r.expiresAt}\n`,
        );
      io.out.write(`${fmt(rows.length)} live login sessions\n`);
    }
    return EXIT.ok;
  }
  const ended = await rt.services.sessions.endByOperator(found, {
    requestId: `ops-${process.pid}`,
    method: 'CLI',
    path: 'ops sessions end',
  });
  if (p.flags.has('json'))
    io.out.write(`${JSON.stringify({ command: 'sessions end', ended, sessions: rows.map((r) => r.id) })}\n`);
  else io.out.write(`sessions end: ${fmt(ended)} login sessions ended on every instance\n`);
  return EXIT.ok;
}
