/**
 * The day-two settings (retention interval and lease, rollover conditions, job retention,
 * schema checks): defaults, and a refused value stops the start with one line naming it.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(env)}`);
}

describe('maintenance settings', () => {
  it('default to the values the service always used', () => {
    expect(loadConfig({}).maintenance).to.deep.equal({
      retentionIntervalSeconds: 300,
      retentionLeaseSeconds: 900,
      heartbeatRollover: { maxAge: '1d', maxPrimaryShardSize: '10gb' },
      auditRollover: { maxAge: '1d', maxPrimaryShardSize: '10gb' },
      jobRetentionDays: 30,
      schemaCheckSeconds: 60,
    });
  });

  it('take the operator’s values; the retention lease follows the interval unless set', () => {
    const m = loadConfig({
      ECS_RETENTION_INTERVAL_SECONDS: '60',
      ECS_HEARTBEAT_ROLLOVER_AGE: '12h',
      ECS_HEARTBEAT_ROLLOVER_SIZE: '5GB',
      ECS_AUDIT_ROLLOVER_AGE: '7d',
      ECS_AUDIT_ROLLOVER_SIZE: '500mb',
      ECS_JOB_RETENTION_DAYS: '0',
      ECS_SCHEMA_CHECK_SECONDS: '5',
    }).maintenance;
    expect(m).to.deep.equal({
      retentionIntervalSeconds: 60,
      retentionLeaseSeconds: 180,
      heartbeatRollover: { maxAge: '12h', maxPrimaryShardSize: '5gb' },
      auditRollover: { maxAge: '7d', maxPrimaryShardSize: '500mb' },
      jobRetentionDays: 0,
      schemaCheckSeconds: 5,
    });
    expect(loadConfig({ ECS_RETENTION_INTERVAL_SECONDS: '60', ECS_RETENTION_LEASE_SECONDS: '61' }).maintenance.retentionLeaseSeconds).to.equal(61);
  });

  it('refuse invalid values, naming the variable and what it takes', () => {
    expect(refusal({ ECS_RETENTION_INTERVAL_SECONDS: '0' })).to.contain('"ECS_RETENTION_INTERVAL_SECONDS" must be greater than or equal to 1');
    expect(refusal({ ECS_RETENTION_INTERVAL_SECONDS: 'often' })).to.contain('"ECS_RETENTION_INTERVAL_SECONDS" must be a number');
    expect(refusal({ ECS_RETENTION_INTERVAL_SECONDS: '600', ECS_RETENTION_LEASE_SECONDS: '600' })).to.contain(
      '"ECS_RETENTION_LEASE_SECONDS" must be greater than "ECS_RETENTION_INTERVAL_SECONDS"',
    );
    expect(refusal({ ECS_HEARTBEAT_ROLLOVER_AGE: '1 day' })).to.contain('"ECS_HEARTBEAT_ROLLOVER_AGE" must be a positive whole number of d, h, m or s');
    expect(refusal({ ECS_AUDIT_ROLLOVER_AGE: '0d' })).to.contain('"ECS_AUDIT_ROLLOVER_AGE"');
    expect(refusal({ ECS_HEARTBEAT_ROLLOVER_SIZE: 'big' })).to.contain('"ECS_HEARTBEAT_ROLLOVER_SIZE" must be a positive whole number of b, kb, mb, gb or tb');
    expect(refusal({ ECS_AUDIT_ROLLOVER_SIZE: '-1gb' })).to.contain('"ECS_AUDIT_ROLLOVER_SIZE"');
    expect(refusal({ ECS_JOB_RETENTION_DAYS: '-1' })).to.contain('"ECS_JOB_RETENTION_DAYS" must be greater than or equal to 0');
    expect(refusal({ ECS_SCHEMA_CHECK_SECONDS: '1.5' })).to.contain('"ECS_SCHEMA_CHECK_SECONDS" must be an integer');
  });

  it('the service process exits 1 at start with one line naming the refused setting', async function () {
    this.timeout(60_000);
    const env: NodeJS.ProcessEnv = { ...process.env, ECS_RETENTION_INTERVAL_SECONDS: '600', ECS_RETENTION_LEASE_SECONDS: '300', PORT: '0' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, err).to.equal(1);
    expect(err.trim().split('\n'), err).to.have.length(1);
    expect(err).to.contain('invalid configuration').and.contain('"ECS_RETENTION_LEASE_SECONDS" must be greater than "ECS_RETENTION_INTERVAL_SECONDS"');
    expect(out).to.equal('');
  });
});
