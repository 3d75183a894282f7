/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and
 * the share of each file. Used for the profiling notes in bench/README.md.
 *
 * node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 30] [--requests N]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

interface HeapProfile {
  head: HeapNode;
}

/** A sampling heap profile (bench/portico-target.ts, BENCH_HEAP_PROFILE): bytes allocated by function and by file. */
function summariseHeap(heap: HeapProfile): void {
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode): void => {
    const where = shortUrl(node.callFrame.url);
    const key = `${node.callFrame.functionName || '(anonymous)'}  ${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    byFile.set(where, (byFile.get(where) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(heap.head);
  const line = (label: string, bytes: number) =>
    `${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${(bytes / 1048576).toFixed(1).padStart(7)} MiB${requests > 0 ? `  ${(bytes / requests).toFixed(0).padStart(6)} B/req` : ''}  ${label}`;
  const out = [
    `heap profile ${file}: ${(total / 1048576).toFixed(1)} MiB allocated (sampled)`,
    '',
    'top allocating functions:',
  ];
  for (const [key, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(line(key, bytes));
  out.push('', 'by file:');
  for (const [key, bytes] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 20)) out.push(line(key, bytes));
  process.stdout.write(`${out.join('\n')}\n`);
}

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

function shortUrl(url: string): string {
  const cut = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'npm:')
    .replace(/^.*\/work\/[^/]+\//, '');
  return cut === '' ? '(native)' : cut;
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile | file.heapprofile> [--top N] [--requests N]');
const parsed = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile | HeapProfile;
const top = argument('--top', 30);
const requests = argument('--requests', 0);
if ('head' in parsed) {
  summariseHeap(parsed);
  process.exit(0);
}
const profile = parsed;

// Self time per node: the sum of the time deltas of its samples.
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++)
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  total += us;
  const where = shortUrl(node.callFrame.url);
  const key = `${node.callFrame.functionName || '(anonymous)'}  ${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  if (node.callFrame.functionName !== '(idle)') byFile.set(where, (byFile.get(where) ?? 0) + us);
}
const busy = total - (byFunction.get('(idle)  (native)') ?? 0);
const line = (label: string, us: number) =>
  `${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms${requests > 0 ? `  ${(us / requests).toFixed(2).padStart(6)} µs/req` : ''}  ${label}`;
const out = [
  `profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percent of busy time)`,
  '',
  'top self time:',
];
for (const [key, us] of [...byFunction]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  out.push(line(key, us));
out.push('', 'by file:');
for (const [key, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 20)) out.push(line(key, us));
process.stdout.write(`${out.join('\n')}\n`);
