/**
 * Issue 18's rows as the bench judges them (bench/lib/report.ts): the latency rows hold "on a
 * quiet machine", so a run whose `direct` control has a p99 above half the 1 ms they allow shows
 * their values but judges none of them, and a target during whose own window the generator sent
 * late is not judged either; the throughput and CPU ratios are judged either way. The
 * `node-floor` control is reported beside them, with no target.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lateGeneratorP99Ms, quietDirectP99Ms, targetChecks } from '../../bench/lib/report.ts';
import type { TargetCheck, TargetResult } from '../../bench/lib/report.ts';

/** A `tail` run's results with `direct`'s p99 at the fixed rate set to `directP99`. */
function tailRun(directP99: number): TargetResult[] {
  const target = (name: string, fields: Partial<TargetResult>): TargetResult => ({
    name,
    measured: true,
    errors: 0,
    ...fields,
  });
  return [
    target('direct', { rps: 70_000, p99_ms: directP99, p999_ms: directP99 * 2, cpu_us_per_req: 9 }),
    target('portico-pass', { rps: 24_000, p99_ms: directP99 + 0.8, p999_ms: 3, cpu_us_per_req: 42 }),
    target('portico-full', { rps: 17_000, p99_ms: directP99 + 1.3, p999_ms: 4, cpu_us_per_req: 58 }),
    target('portico-logistics-stores', { rps: 6_000, cpu_us_per_req: 160 }),
  ];
}

function row(checks: TargetCheck[], start: string): TargetCheck {
  const found = checks.find((check) => check.measure.startsWith(start));
  assert.ok(found, `no row starting with ${start}`);
  return found;
}

describe('bench report: issue 18 rows and the quiet-machine check', () => {
  it('judges the latency rows when direct’s own p99 is within the bound', () => {
    const checks = targetChecks(tailRun(0.34));
    assert.equal(row(checks, 'machine quiet enough').met, true);
    assert.equal(row(checks, 'portico-pass: added p99').met, true);
    assert.equal(row(checks, 'portico-full: added p99').met, false);
    assert.equal(row(checks, 'portico-full p99.9').met, true);
  });

  it('shows but does not judge them on a machine whose own tail is longer', () => {
    const checks = targetChecks(tailRun(1.66));
    assert.equal(row(checks, 'machine quiet enough').met, false);
    assert.equal(row(checks, 'machine quiet enough').value, '1.660 ms');
    for (const start of ['portico-pass: added p99', 'portico-full: added p99', 'portico-full p99.9']) {
      assert.equal(row(checks, start).met, 'not judged', start);
      assert.notEqual(row(checks, start).value, '—', `${start} still shows its value`);
    }
    // Throughput and CPU ratios do not depend on the machine's tail.
    assert.equal(row(checks, 'portico-full ÷ portico-pass').met, false);
    assert.equal(row(checks, 'portico-logistics-stores CPU').met, false);
    assert.equal(row(checks, 'portico-logistics-stores CPU').value, (160 / 58).toFixed(2));
  });

  it('the bound is exactly half the 1 ms the added-p99 rows allow', () => {
    assert.equal(quietDirectP99Ms, 0.5);
    assert.equal(row(targetChecks(tailRun(0.5)), 'machine quiet enough').met, true);
    assert.equal(row(targetChecks(tailRun(0.51)), 'portico-full p99.9').met, 'not judged');
  });

  it('does not judge a target whose window had the generator itself sending late', () => {
    const run = tailRun(0.34);
    const full = run.find((result) => result.name === 'portico-full')!;
    full.p99_ms = 0.34 + 0.6;
    full.generator_send_lag_ms = { p99: lateGeneratorP99Ms + 0.01, max: 9 };
    const checks = targetChecks(run);
    assert.equal(row(checks, 'portico-full: added p99').met, 'not judged');
    assert.match(row(checks, 'portico-full: added p99').value, /^0\.600 ms \(generator late\)$/);
    assert.equal(row(checks, 'portico-full p99.9').met, 'not judged');
    // The other target's window was quiet: it is judged.
    assert.equal(row(checks, 'portico-pass: added p99').met, true);
  });

  it('reports the node-floor control’s added p99 with no target', () => {
    const run = [...tailRun(0.34), { name: 'node-floor', measured: true, errors: 0, p99_ms: 1.04 }];
    const control = row(targetChecks(run), 'node-floor (control)');
    assert.equal(control.met, 'reported');
    assert.equal(control.value, '0.700 ms');
    assert.equal(
      targetChecks(tailRun(0.34)).some((check) => check.measure.startsWith('node-floor')),
      false,
    );
  });

  it('without a direct control there is no quiet check, and the latency rows are not measured', () => {
    const checks = targetChecks(tailRun(0.3).filter((result) => result.name !== 'direct'));
    assert.equal(
      checks.some((check) => check.measure.startsWith('machine quiet enough')),
      false,
    );
    assert.equal(row(checks, 'portico-pass: added p99').met, 'not measured');
  });
});
