import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX } from '../helpers/app.js';

describe('process lifecycle', () => {
  it('SIGTERM: finishes in-flight requests, then exits 0', async function () {
    this.timeout(60_000);
    const es = await testElasticsearch();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, ELASTICSEARCH_URL: es.url, PORT: '0', HOST: '127.0.0.1', ECS_INDEX_PREFIX: `${RUN_PREFIX}-life`, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        output += d.toString();
        const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`exited early with ${code}: ${buf}`)));
    });
    // A request whose body is still arriving when SIGTERM lands is in flight: it must be answered.
    const encoder = new TextEncoder();
    let push: (chunk: string | null) => void = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(encoder.encode(chunk)));
      },
    });
    const inFlight = fetch(`${url}/endpoint-control-service/v1/client-version/default`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit).then((r) => r.status);
    push('{"linux": "3.11.0", ');
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    push('"mac": "3.11.0", "windows": "3.11.0"}');
    push(null);
    expect(await inFlight).to.equal(200);
    const code = await exited;
    expect(code, output).to.equal(0);
    // No longer accepting.
    const after = await fetch(`${url}/health/live`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(after).to.equal('refused');
  });
});
