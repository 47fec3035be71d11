import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { DEVELOPMENT_INSTALLER_SIGNING_KEY } from '../../src/config.js';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX, startTestApp } from '../helpers/app.js';

interface LogLine {
  level: number;
  msg: string;
  openOperations?: string[];
  node?: string;
}

const OPEN_WARNING = 'ECS_REQUIRE_TOKEN_EVERYWHERE=false';

function parse(lines: string[]): LogLine[] {
  return lines.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as LogLine);
}

describe('start-up checks', function () {
  // Each test starts its own app; the first one on a loaded machine also sets the run's indices up.
  this.timeout(120_000);

  it('the service process refuses to start with the development installer signing key outside development mode', async () => {
    const es = await testElasticsearch();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ELASTICSEARCH_URL: es.url,
      PORT: '0',
      HOST: '127.0.0.1',
      ECS_INDEX_PREFIX: `${RUN_PREFIX}-refuse`,
      LOG_LEVEL: 'info',
    };
    delete env.ECS_INSTALLER_SIGNING_KEY;
    delete env.ECS_DEVELOPMENT;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, output).to.equal(1);
    const fatal = parse([output]).filter((l) => l.level === 60);
    expect(fatal, output).to.have.length(1);
    expect(fatal[0].msg).to.contain('ECS_INSTALLER_SIGNING_KEY').and.contain('ECS_DEVELOPMENT=true');
    expect(output).not.to.contain('listening');
  });

  it('startServer refuses the development key named explicitly when ECS_DEVELOPMENT=false', async () => {
    const err = await startTestApp({
      ECS_DEVELOPMENT: 'false',
      ECS_INSTALLER_SIGNING_KEY: DEVELOPMENT_INSTALLER_SIGNING_KEY,
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.contain('refusing to start').and.contain('ECS_INSTALLER_SIGNING_KEY');
  });

  it('starts outside development mode with a signing key of its own', async () => {
    const app = await startTestApp({
      ECS_DEVELOPMENT: 'false',
      ECS_INSTALLER_SIGNING_KEY: 'start-checks-test-key-0123456789',
    });
    try {
      const res = await app.anon.get('/client-version/default');
      expect(res.status).to.equal(200);
      // The listening line names the Node it runs on: a supported one (engines: >= 22).
      const listening = parse(app.logs).find((l) => l.msg === 'endpoint control service listening');
      expect(listening?.node).to.equal(process.version);
      expect(Number(process.versions.node.split('.')[0])).to.be.at.least(22);
    } finally {
      await app.close();
    }
  });

  it('logs one warning listing the unsecured operations when ECS_REQUIRE_TOKEN_EVERYWHERE=false', async () => {
    const app = await startTestApp({ ECS_REQUIRE_TOKEN_EVERYWHERE: 'false' });
    try {
      const warnings = parse(app.logs).filter((l) => l.msg.includes(OPEN_WARNING));
      expect(warnings).to.have.length(1);
      expect(warnings[0].level).to.equal(40);
      const unsecured = app.server.handle.routes.filter((r) => !r.sec).map((r) => `${r.method} ${r.path}`);
      expect(unsecured).to.include('GET /client-version/default');
      expect(warnings[0].openOperations).to.have.members(unsecured);
      expect(warnings[0].msg).to.contain(`${unsecured.length} operations`);
      // And those operations do answer a caller without a token.
      expect((await app.anon.get('/client-version/default')).status).to.equal(200);
    } finally {
      await app.close();
    }
  });

  it('logs no such warning when ECS_REQUIRE_TOKEN_EVERYWHERE=true', async () => {
    const app = await startTestApp({ ECS_REQUIRE_TOKEN_EVERYWHERE: 'true' });
    try {
      expect(parse(app.logs).filter((l) => l.msg.includes(OPEN_WARNING))).to.have.length(0);
      expect((await app.anon.get('/client-version/default')).status).to.equal(401);
    } finally {
      await app.close();
    }
  });
});
