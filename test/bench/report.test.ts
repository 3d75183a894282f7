/**
 * Issue 18's rows as the bench judges them (bench/lib/report.ts): the latency rows hold "on a
 * quiet machine", so a run whose `direct` control has a p99 above half the 1 ms they allow shows
 * their values but judges none of them; the throughput and CPU ratios are judged either way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quietDirectP99Ms, targetChecks } from '../../bench/lib/report.ts';
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

  it('without a direct control there is no quiet check, and the latency rows are not measured', () => {
    const checks = targetChecks(tailRun(0.3).filter((result) => result.name !== 'direct'));
    assert.equal(
      checks.some((check) => check.measure.startsWith('machine quiet enough')),
      false,
    );
    assert.equal(row(checks, 'portico-pass: added p99').met, 'not measured');
  });
});
