import { expect } from 'chai';
import { COMMAND_MESSAGE_MOVES } from '../helpers/command-status.js';
import { expectErrorBody, uid, useTenants } from '../helpers/app.js';
import { P, type Api } from '../helpers/http.js';
import { COMMAND_MESSAGE_STATUSES, type CommandMessageStatus } from '../../src/resources/commands/model.js';
import { commandsFor, loadCatalogue } from '../../src/resources/commands/catalogue.js';

interface Message {
  id: string;
  status: CommandMessageStatus;
  endpointId: string;
  orgId: string;
  module: string;
  name: string;
  uuid: string;
  ts: string;
  payload: Record<string, unknown>;
  version: { sequenceNumber: number; primaryTerm: number };
  createdBy: { username: string; authenticator: string };
  updatedBy: { username: string; authenticator: string };
  createdAt: string;
  updatedAt: string;
}
interface Page<T> {
  pageRequest: { page: number; size: number };
  totalCount: number;
  totalPages: number;
  items: T[];
}


describe('commands, support and the command pipeline (spec 4.8, 4.5 ioc and uninstall-protect)', () => {
  const catalogue = loadCatalogue();

  const w = useTenants();

  /** An agent endpoint in `orgId`, CONNECTED through the API unless told otherwise. */
  async function endpoint(orgId: string, opts: { os?: string; connected?: boolean } = {}): Promise<string> {
    const ep = await w.t.world.endpoint(orgId, { hostInfo: { os: opts.os ?? 'windows', hostName: uid('host') } });
    if (opts.connected !== false) {
      const res = await w.t.admin.post(`/endpoint/${ep.id}/connect`);
      expect(res.status, res.text).to.equal(204);
    }
    return ep.id;
  }

  async function setCmd(endpointId: string, status: 'ACTIVE' | 'INACTIVE' | 'PENDING'): Promise<void> {
    // POST creates the endpoint's record; PUT replaces it once it exists.
    let res = await w.t.admin.post(`/endpoint/${endpointId}/enabled-modules`, { cmd: status });
    if (res.status === 409) res = await w.t.admin.put(`/endpoint/${endpointId}/enabled-modules`, { cmd: status });
    expect(res.status, res.text).to.equal(200);
  }

  async function messages(endpointId: string, query = ''): Promise<Message[]> {
    const res = await w.t.admin.get<Page<Message>>(`/command-message/endpoint/${endpointId}${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.items;
  }

  async function newMessage(endpointId: string, as: Api = w.adminA): Promise<Message> {
    const res = await as.post<Message>(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping' });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  describe('command messages', () => {
    it('POST answers 201 with a CREATED message carrying the base fields, a SeqNoPrimaryTerm and the caller', async () => {
      const ep = await endpoint(w.childA);
      const payload = { script: 'whoami', nested: { list: [1, 'two'], flag: true } };
      const res = await w.adminA.post<Message>(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'run-script', payload });
      expect(res.status, res.text).to.equal(201);
      const m = res.body;
      expect(m).to.include({ status: 'CREATED', endpointId: ep, orgId: w.childA, module: 'cmd', name: 'run-script' });
      expect(m.payload).to.deep.equal(payload);
      expect(m.id).to.be.a('string').and.not.equal('');
      expect(m.uuid).to.match(/^[0-9a-f-]{36}$/);
      expect(m.version).to.have.all.keys('sequenceNumber', 'primaryTerm');
      expect(m.createdBy).to.deep.equal(m.updatedBy);
      expect(m.createdBy.username).to.equal(`admin-${w.orgA}`);
      expect(Date.parse(m.ts)).to.be.closeTo(Date.now(), 60_000);
      expect(m.ts).to.equal(m.createdAt);
      const got = await w.readerA.get<Message>(`/command-message/${m.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(m);
    });

    it('a payload is optional (an empty object) and a message is queued while the endpoint is not connected', async () => {
      const ep = await endpoint(w.childA, { connected: false });
      const res = await w.adminA.post<Message>(`/command-message/endpoint/${ep}`, { module: 'support', name: 'csi' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.payload).to.deep.equal({});
    });

    it('POST validates module and name (400), and is 404 for an unknown endpoint', async () => {
      const ep = await endpoint(w.childA);
      const missing = await w.adminA.post(`/command-message/endpoint/${ep}`, { name: 'ping' });
      expectErrorBody(missing, 400, `${P}/command-message/endpoint/${ep}`);
      expect((missing.body as { message: string }).message).to.contain('body.module');
      expectErrorBody(await w.adminA.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'has space' }), 400);
      expectErrorBody(await w.adminA.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping', payload: [1] }), 400);
      const nest = (depth: number): Record<string, unknown> => (depth === 1 ? { leaf: 1 } : { n: nest(depth - 1) });
      expect((await w.adminA.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping', payload: nest(32) })).status).to.equal(201);
      const deep = await w.adminA.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping', payload: nest(40) });
      expectErrorBody(deep, 400);
      expect((deep.body as { message: string }).message).to.contain('body.payload');
      expectErrorBody(await w.adminA.post(`/command-message/endpoint/${uid('nope')}`, { module: 'cmd', name: 'ping' }), 404);
    });

    it('POST is 409 for an UNINSTALLED or deleted endpoint', async () => {
      const gone = await endpoint(w.childA);
      expect((await w.t.admin.post(`/endpoint/${gone}/uninstall`)).status).to.equal(204);
      const r1 = await w.adminA.post(`/command-message/endpoint/${gone}`, { module: 'cmd', name: 'ping' });
      expectErrorBody(r1, 409);
      expect((r1.body as { message: string }).message).to.contain('UNINSTALLED');
      const deleted = await endpoint(w.childA);
      expect((await w.adminA.delete(`/endpoint/${deleted}`)).status).to.equal(204);
      const r2 = await w.adminA.post(`/command-message/endpoint/${deleted}`, { module: 'cmd', name: 'ping' });
      expectErrorBody(r2, 409);
      expect((r2.body as { message: string }).message).to.contain('deleted');
      // Deleted outside the caller's subtree stays 403, not 409.
      expectErrorBody(await w.adminB.post(`/command-message/endpoint/${deleted}`, { module: 'cmd', name: 'ping' }), 403);
    });

    it('authorization: 401 without a token, 403 outside the subtree and for a reader', async () => {
      const ep = await endpoint(w.childA);
      const m = await newMessage(ep);
      expectErrorBody(await w.t.anon.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping' }), 401);
      expectErrorBody(await w.adminB.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping' }), 403);
      expectErrorBody(await w.readerA.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping' }), 403);
      expectErrorBody(await w.adminB.get(`/command-message/${m.id}`), 403);
      expectErrorBody(await w.adminB.get(`/command-message/endpoint/${ep}`), 403);
      expectErrorBody(await w.adminB.patch(`/command-message/${m.id}/status/SENT`), 403);
      expectErrorBody(await w.readerA.patch(`/command-message/${m.id}/status/SENT`), 403);
      expectErrorBody(await w.t.anon.get(`/command-message/${m.id}`), 401);
      expect((await w.adminA.get<Message>(`/command-message/${m.id}`)).body.status).to.equal('CREATED');
    });

    it('GET one is 404 for an unknown id; the list is oldest first, filters by status and pages', async () => {
      expectErrorBody(await w.adminA.get(`/command-message/${uid('msg')}`), 404);
      const ep = await endpoint(w.childA);
      const first = await newMessage(ep);
      const second = await newMessage(ep);
      const third = await newMessage(ep);
      await w.adminA.patch(`/command-message/${second.id}/status/RETRY`);
      const all = await messages(ep);
      expect(all.map((m) => m.id)).to.deep.equal([first.id, second.id, third.id]);
      expect((await messages(ep, '?status=CREATED')).map((m) => m.id)).to.deep.equal([first.id, third.id]);
      expect((await messages(ep, '?status=RETRY')).map((m) => m.id)).to.deep.equal([second.id]);
      const page = await w.readerA.get<Page<Message>>(`/command-message/endpoint/${ep}?size=2&page=1`);
      expect(page.status).to.equal(200);
      expect(page.body.totalCount).to.equal(3);
      expect(page.body.totalPages).to.equal(2);
      expect(page.body.items.map((m) => m.id)).to.deep.equal([third.id]);
      expectErrorBody(await w.readerA.get(`/command-message/endpoint/${ep}?status=DONE`), 400);
      expectErrorBody(await w.readerA.get(`/command-message/endpoint/${uid('nope')}`), 404);
    });
  });

  describe('command message status machine', () => {
    /** A fresh message moved into `status` through allowed moves. */
    async function messageIn(ep: string, status: CommandMessageStatus): Promise<Message> {
      const m = await newMessage(ep);
      const path: CommandMessageStatus[] = status === 'CREATED' ? [] : status === 'RETRY' ? ['RETRY'] : [status];
      let cur = m;
      for (const s of path) {
        const res = await w.adminA.patch<Message>(`/command-message/${m.id}/status/${s}`);
        expect(res.status, res.text).to.equal(200);
        cur = res.body;
      }
      return cur;
    }

    for (const from of COMMAND_MESSAGE_STATUSES) {
      it(`from ${from}: allows ${COMMAND_MESSAGE_MOVES[from].join(', ') || 'nothing'} and refuses every other move with 409`, async () => {
        const ep = await endpoint(w.childA);
        for (const to of COMMAND_MESSAGE_STATUSES) {
          const m = await messageIn(ep, from);
          expect(m.status).to.equal(from);
          const res = await w.adminA.patch<Message>(`/command-message/${m.id}/status/${to}`);
          if (COMMAND_MESSAGE_MOVES[from].includes(to)) {
            expect(res.status, `${from} → ${to}: ${res.text}`).to.equal(200);
            expect(res.body.status).to.equal(to);
            expect(res.body.version.sequenceNumber).to.be.greaterThan(m.version.sequenceNumber);
            expect(Date.parse(res.body.updatedAt)).to.be.at.least(Date.parse(m.updatedAt));
          } else {
            expectErrorBody(res, 409);
            expect((res.body as unknown as { message: string }).message, `${from} → ${to}`).to.contain(`from ${from} to ${to}`);
            expect((await w.adminA.get<Message>(`/command-message/${m.id}`)).body.status).to.equal(from);
          }
        }
      });
    }

    it('RETRY may repeat before SENT', async () => {
      const ep = await endpoint(w.childA);
      const m = await newMessage(ep);
      for (const s of ['RETRY', 'RETRY', 'RETRY', 'SENT'] as const) {
        expect((await w.adminA.patch(`/command-message/${m.id}/status/${s}`)).status).to.equal(200);
      }
    });

    it('SENT records a DELIVERED delivery for the message uuid; other moves record none', async () => {
      const ep = await endpoint(w.childA);
      const m = await newMessage(ep);
      expectErrorBody(await w.readerA.get(`/command-message/delivery/${m.uuid}`), 404);
      await w.adminA.patch(`/command-message/${m.id}/status/RETRY`);
      expectErrorBody(await w.readerA.get(`/command-message/delivery/${m.uuid}`), 404);
      expect((await w.adminA.patch(`/command-message/${m.id}/status/SENT`)).status).to.equal(200);
      const d = await w.readerA.get<Record<string, unknown>>(`/command-message/delivery/${m.uuid}`);
      expect(d.status, d.text).to.equal(200);
      expect(d.body).to.include({ uuid: m.uuid, endpointId: ep, orgId: w.childA, status: 'DELIVERED', version: 1 });
      expect(d.body.createdBy).to.equal(`admin-${w.orgA}`);
      expectErrorBody(await w.adminB.get(`/command-message/delivery/${m.uuid}`), 403);
      const failed = await newMessage(ep);
      await w.adminA.patch(`/command-message/${failed.id}/status/MSG_WSS_FAIL`);
      expectErrorBody(await w.readerA.get(`/command-message/delivery/${failed.uuid}`), 404);
    });

    it('a PATCH carrying a stale version is 409 and changes nothing; the current version applies', async () => {
      const ep = await endpoint(w.childA);
      const m = await newMessage(ep);
      const retried = await w.adminA.patch<Message>(`/command-message/${m.id}/status/RETRY`);
      const stale = await w.adminA.patch(`/command-message/${m.id}/status/SENT`, { version: m.version });
      expectErrorBody(stale, 409);
      expect((stale.body as { message: string }).message).to.contain('stale version');
      expect((await w.adminA.get<Message>(`/command-message/${m.id}`)).body.status).to.equal('RETRY');
      const ok = await w.adminA.patch<Message>(`/command-message/${m.id}/status/SENT`, { version: retried.body.version });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.status).to.equal('SENT');
      expectErrorBody(await w.adminA.patch(`/command-message/${m.id}/status/SENT`, { version: { sequenceNumber: -1 } }), 400);
    });

    it('PATCH: unknown status 400, unknown message 404', async () => {
      const ep = await endpoint(w.childA);
      const m = await newMessage(ep);
      expectErrorBody(await w.adminA.patch(`/command-message/${m.id}/status/DONE`), 400);
      expectErrorBody(await w.adminA.patch(`/command-message/${uid('msg')}/status/SENT`), 404);
    });

    it("an agent token reads its own endpoint's messages and moves their status, nothing else here", async () => {
      const ep = await endpoint(w.childA);
      const other = await endpoint(w.childA);
      const agent = w.t.world.as(await w.t.world.token('agent', w.childA, ep));
      const mine = await newMessage(ep);
      const theirs = await newMessage(other);
      expect((await agent.get<Message>(`/command-message/${mine.id}`)).body.id).to.equal(mine.id);
      const list = await agent.get<Page<Message>>(`/command-message/endpoint/${ep}`);
      expect(list.status).to.equal(200);
      expect(list.body.items.map((m) => m.id)).to.deep.equal([mine.id]);
      const moved = await agent.patch<Message>(`/command-message/${mine.id}/status/SENT`);
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body.updatedBy.username).to.equal(`agent-${w.childA}`);
      expect((await agent.get(`/command-message/delivery/${mine.uuid}`)).status).to.equal(200);

      expectErrorBody(await agent.get(`/command-message/${theirs.id}`), 403);
      expectErrorBody(await agent.get(`/command-message/endpoint/${other}`), 403);
      expectErrorBody(await agent.patch(`/command-message/${theirs.id}/status/SENT`), 403);
      expectErrorBody(await agent.post(`/command-message/endpoint/${ep}`, { module: 'cmd', name: 'ping' }), 403);
      expectErrorBody(await agent.get(`/command/endpoint/${ep}`), 403);
      expectErrorBody(await agent.post(`/command/endpoint/${ep}`, { command: 'ping' }), 403);
      expectErrorBody(await agent.post('/csi', { endpointId: ep, mode: 'BASIC' }), 403);
      expectErrorBody(await agent.post(`/endpoint/${ep}/dynamic-module/ioc`, { rulesUrl: 'https://rules.example.com/r.yar' }), 403);
      expectErrorBody(await agent.post(`/endpoint/${ep}/uninstall-protect`), 403);
    });
  });

  describe('commands', () => {
    it("lists nothing until the cmd module is ACTIVE, then the catalogue's commands for the endpoint's OS", async () => {
      const win = await endpoint(w.childA, { os: 'windows' });
      const linux = await endpoint(w.childA, { os: 'linux' });
      expect((await w.readerA.get(`/command/endpoint/${win}`)).body).to.deep.equal([]);
      await setCmd(win, 'PENDING');
      expect((await w.readerA.get(`/command/endpoint/${win}`)).body).to.deep.equal([]);
      await setCmd(win, 'ACTIVE');
      await setCmd(linux, 'ACTIVE');
      const winList = await w.readerA.get<string[]>(`/command/endpoint/${win}`);
      expect(winList.status).to.equal(200);
      expect(winList.body).to.deep.equal(commandsFor(catalogue, 'windows'));
      expect(winList.body).to.include('ipconfig').and.not.include('ifconfig');
      const linuxList = await w.readerA.get<string[]>(`/command/endpoint/${linux}`);
      expect(linuxList.body).to.deep.equal(commandsFor(catalogue, 'linux'));
      expect(linuxList.body).to.include('ifconfig').and.not.include('ipconfig');
      await setCmd(linux, 'INACTIVE');
      expect((await w.readerA.get(`/command/endpoint/${linux}`)).body).to.deep.equal([]);
    });

    it('the organization-level cmd status applies when the endpoint has none of its own', async () => {
      const org = await w.t.world.org(w.orgA);
      const ep = await endpoint(org, { os: 'darwin' });
      const res = await w.t.admin.post(`/org/${org}/enabled-modules`, { cmd: 'ACTIVE' });
      expect(res.status, res.text).to.equal(200);
      expect((await w.readerA.get(`/command/endpoint/${ep}`)).body).to.deep.equal(commandsFor(catalogue, 'mac'));
    });

    it('GET: 404 unknown, 403 outside the subtree, 401 without a token', async () => {
      const ep = await endpoint(w.childA);
      expectErrorBody(await w.readerA.get(`/command/endpoint/${uid('nope')}`), 404);
      expectErrorBody(await w.adminB.get(`/command/endpoint/${ep}`), 403);
      expectErrorBody(await w.t.anon.get(`/command/endpoint/${ep}`), 401);
    });

    it('POST queues an accepted command as a cmd message and answers 200 without a body', async () => {
      const ep = await endpoint(w.childA, { os: 'windows' });
      await setCmd(ep, 'ACTIVE');
      const res = await w.adminA.post(`/command/endpoint/${ep}`, { command: 'ipconfig', args: ['/all'] });
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.equal('');
      const [m] = await messages(ep);
      expect(m).to.include({ module: 'cmd', name: 'ipconfig', status: 'CREATED', endpointId: ep, orgId: w.childA });
      expect(m.payload).to.deep.equal({ args: ['/all'] });
    });

    it('POST: a command the endpoint does not accept is 400 (wrong OS, cmd not ACTIVE, unknown, missing)', async () => {
      const ep = await endpoint(w.childA, { os: 'windows' });
      const inactive = await endpoint(w.childA, { os: 'windows' });
      await setCmd(ep, 'ACTIVE');
      for (const [target, body] of [
        [ep, { command: 'ifconfig' }],
        [ep, { command: 'format-disk' }],
        [ep, {}],
        [ep, { command: 'ping', args: 'x' }],
        [inactive, { command: 'ping' }],
      ] as const) {
        const res = await w.adminA.post(`/command/endpoint/${target}`, body);
        expectErrorBody(res, 400);
      }
      expect(await messages(ep)).to.have.length(0);
      expect(await messages(inactive)).to.have.length(0);
    });

    it('POST: 409 when the endpoint is not CONNECTED, UNINSTALLED or deleted; 404 unknown; 403 outside', async () => {
      const never = await endpoint(w.childA, { connected: false });
      const disconnected = await endpoint(w.childA);
      const uninstalled = await endpoint(w.childA);
      const deleted = await endpoint(w.childA);
      for (const ep of [never, disconnected, uninstalled, deleted]) await setCmd(ep, 'ACTIVE');
      expect((await w.t.admin.post(`/endpoint/${disconnected}/disconnect`)).status).to.equal(204);
      expect((await w.t.admin.post(`/endpoint/${uninstalled}/uninstall`)).status).to.equal(204);
      expect((await w.adminA.delete(`/endpoint/${deleted}`)).status).to.equal(204);
      for (const [ep, word] of [
        [never, 'NEVER'],
        [disconnected, 'DISCONNECTED'],
        [uninstalled, 'UNINSTALLED'],
        [deleted, 'deleted'],
      ] as const) {
        const res = await w.adminA.post(`/command/endpoint/${ep}`, { command: 'ping' });
        expectErrorBody(res, 409);
        expect((res.body as { message: string }).message).to.contain(word);
      }
      expectErrorBody(await w.adminA.post(`/command/endpoint/${uid('nope')}`, { command: 'ping' }), 404);
      const ep = await endpoint(w.childA);
      await setCmd(ep, 'ACTIVE');
      expectErrorBody(await w.adminB.post(`/command/endpoint/${ep}`, { command: 'ping' }), 403);
      expectErrorBody(await w.readerA.post(`/command/endpoint/${ep}`, { command: 'ping' }), 403);
      expectErrorBody(await w.t.anon.post(`/command/endpoint/${ep}`, { command: 'ping' }), 401);
    });
  });

  describe('support information (csi)', () => {
    it('queues a support csi message in the requested mode', async () => {
      const ep = await endpoint(w.childA);
      const res = await w.adminA.post('/csi', { endpointId: ep, mode: 'FULL' });
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.equal('');
      const [m] = await messages(ep);
      expect(m).to.include({ module: 'support', name: 'csi', status: 'CREATED' });
      expect(m.payload).to.deep.equal({ mode: 'FULL' });
    });

    it('400 for a bad or missing mode; 404 unknown; 409 not connected or deleted; 403 outside', async () => {
      const ep = await endpoint(w.childA);
      expectErrorBody(await w.adminA.post('/csi', { endpointId: ep, mode: 'EVERYTHING' }), 400);
      expectErrorBody(await w.adminA.post('/csi', { endpointId: ep }), 400);
      expectErrorBody(await w.adminA.post('/csi', { mode: 'BASIC' }), 400);
      expectErrorBody(await w.adminA.post('/csi', { endpointId: uid('nope'), mode: 'BASIC' }), 404);
      const idle = await endpoint(w.childA, { connected: false });
      expectErrorBody(await w.adminA.post('/csi', { endpointId: idle, mode: 'BASIC' }), 409);
      const deleted = await endpoint(w.childA);
      await w.adminA.delete(`/endpoint/${deleted}`);
      expectErrorBody(await w.adminA.post('/csi', { endpointId: deleted, mode: 'BASIC' }), 409);
      expectErrorBody(await w.adminB.post('/csi', { endpointId: ep, mode: 'BASIC' }), 403);
      expectErrorBody(await w.t.anon.post('/csi', { endpointId: ep, mode: 'BASIC' }), 401);
      expect(await messages(ep)).to.have.length(0);
    });
  });

  describe('IOC rules update', () => {
    it('queues an iocDetection update-rules message with the https rules URL', async () => {
      const ep = await endpoint(w.childA);
      const rulesUrl = 'https://rules.example.com/ioc/2024-05.yar';
      const res = await w.adminA.post(`/endpoint/${ep}/dynamic-module/ioc`, { rulesUrl });
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.equal('');
      const [m] = await messages(ep);
      expect(m).to.include({ module: 'iocDetection', name: 'update-rules' });
      expect(m.payload).to.deep.equal({ rulesUrl });
    });

    it('400 unless rulesUrl is an https URL; 404 unknown; 409 uninstalled; 403 outside', async () => {
      const ep = await endpoint(w.childA);
      for (const rulesUrl of ['http://rules.example.com/r.yar', 'ftp://x/r', 'not a url', '']) {
        expectErrorBody(await w.adminA.post(`/endpoint/${ep}/dynamic-module/ioc`, { rulesUrl }), 400);
      }
      expectErrorBody(await w.adminA.post(`/endpoint/${ep}/dynamic-module/ioc`), 400);
      const ok = { rulesUrl: 'https://rules.example.com/r.yar' };
      expectErrorBody(await w.adminA.post(`/endpoint/${uid('nope')}/dynamic-module/ioc`, ok), 404);
      const gone = await endpoint(w.childA);
      await w.t.admin.post(`/endpoint/${gone}/uninstall`);
      expectErrorBody(await w.adminA.post(`/endpoint/${gone}/dynamic-module/ioc`, ok), 409);
      expectErrorBody(await w.adminB.post(`/endpoint/${ep}/dynamic-module/ioc`, ok), 403);
      expect(await messages(ep)).to.have.length(0);
    });
  });

  describe('uninstall-protect and vendor installation data', () => {
    it('registers antivirus installation data once per endpoint: 201 VendorData, then 409', async () => {
      const ep = await endpoint(w.childA);
      const body = { endpointId: ep, orgId: w.childA, companyId: 'cmp-1', hardwareId: 'hw-42' };
      const res = await w.adminA.post('/vendor/antivirus/installation-data', body);
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.deep.equal({ vendor: 'ANTIVIRUS_VENDOR', uniqueId: 'hw-42', endpointId: ep, orgId: w.childA });
      const again = await w.adminA.post('/vendor/antivirus/installation-data', { ...body, hardwareId: 'hw-43' });
      expectErrorBody(again, 409);
    });

    it('installation data: 400 for a missing field, an unknown endpoint or another org; 403 outside; reader 403', async () => {
      const ep = await endpoint(w.childA);
      const body = { endpointId: ep, orgId: w.childA, companyId: 'c', hardwareId: 'h' };
      expectErrorBody(await w.adminA.post('/vendor/antivirus/installation-data', { ...body, hardwareId: undefined }), 400);
      expectErrorBody(await w.adminA.post('/vendor/antivirus/installation-data', { ...body, endpointId: uid('nope') }), 400);
      const wrongOrg = await w.adminA.post('/vendor/antivirus/installation-data', { ...body, orgId: w.orgA });
      expectErrorBody(wrongOrg, 400);
      expect((wrongOrg.body as { message: string }).message).to.contain('body.orgId');
      expectErrorBody(await w.adminB.post('/vendor/antivirus/installation-data', { ...body, orgId: w.orgB }), 403);
      expectErrorBody(await w.adminB.post('/vendor/antivirus/installation-data', body), 403);
      expectErrorBody(await w.readerA.post('/vendor/antivirus/installation-data', body), 403);
      expectErrorBody(await w.t.anon.post('/vendor/antivirus/installation-data', body), 401);
      // None of the refusals registered anything.
      expect((await w.adminA.post('/vendor/antivirus/installation-data', body)).status).to.equal(201);
    });

    it('uninstall-protect queues an antivirus uninstall message naming the product and its registered installation', async () => {
      const plain = await endpoint(w.childA);
      const res = await w.adminA.post(`/endpoint/${plain}/uninstall-protect`);
      expect(res.status, res.text).to.equal(200);
      expect(res.text).to.equal('');
      const [m] = await messages(plain);
      expect(m).to.include({ module: 'antivirus', name: 'uninstall-protect', status: 'CREATED' });
      expect(m.payload).to.deep.equal({ product: 'ANTIVIRUS_VENDOR' });

      const registered = await endpoint(w.childA);
      await w.adminA.post('/vendor/antivirus/installation-data', { endpointId: registered, orgId: w.childA, companyId: 'c9', hardwareId: 'h9' });
      expect((await w.adminA.post(`/endpoint/${registered}/uninstall-protect`)).status).to.equal(200);
      const [m2] = await messages(registered);
      expect(m2.payload).to.deep.equal({ product: 'ANTIVIRUS_VENDOR', uniqueId: 'h9', companyId: 'c9', hardwareId: 'h9' });
    });

    it('uninstall-protect: 404 unknown; 409 not connected, uninstalled or deleted; 403 outside', async () => {
      expectErrorBody(await w.adminA.post(`/endpoint/${uid('nope')}/uninstall-protect`), 404);
      const idle = await endpoint(w.childA, { connected: false });
      expectErrorBody(await w.adminA.post(`/endpoint/${idle}/uninstall-protect`), 409);
      const gone = await endpoint(w.childA);
      await w.t.admin.post(`/endpoint/${gone}/uninstall`);
      expectErrorBody(await w.adminA.post(`/endpoint/${gone}/uninstall-protect`), 409);
      const deleted = await endpoint(w.childA);
      await w.adminA.delete(`/endpoint/${deleted}`);
      expectErrorBody(await w.adminA.post(`/endpoint/${deleted}/uninstall-protect`), 409);
      const ep = await endpoint(w.childA);
      expectErrorBody(await w.adminB.post(`/endpoint/${ep}/uninstall-protect`), 403);
      expectErrorBody(await w.readerA.post(`/endpoint/${ep}/uninstall-protect`), 403);
      expect(await messages(ep)).to.have.length(0);
    });
  });
});
