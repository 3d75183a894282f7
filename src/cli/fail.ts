import { DefinitionError, PorticoError } from '../errors.ts';
import { ServerError } from './client.ts';

/** Prints an error as one line per problem and exits 1. */
export function fail(error: unknown): never {
  const lines: string[] = [];
  if (error instanceof ServerError) {
    const problems = error.body.error?.problems;
    if (problems && problems.length > 0) {
      const file = error.body.error?.file ?? 'document';
      for (const p of problems) lines.push(`${file}: ${p.path}: ${p.reason} [${p.rule}]`);
      lines.push(...unlisted(file, problems.length, error.body.error?.problemCount));
    } else lines.push(error.message);
  } else if (error instanceof DefinitionError) {
    for (const p of error.problems) lines.push(`${error.file}: ${p.path}: ${p.reason} [${p.rule}]`);
    lines.push(...unlisted(error.file, error.problems.length, error.problemCount));
  } else if (error instanceof PorticoError) {
    lines.push(error.message);
  } else {
    lines.push((error as Error)?.message ?? String(error));
  }
  for (const line of lines) process.stderr.write(`portico: ${line}\n`);
  process.exit(1);
}

/** The line that says how many problems the list leaves out (it holds the first 100). */
function unlisted(file: string, listed: number, count: number | undefined): string[] {
  return count !== undefined && count > listed ? [`${file}: … and ${count - listed} more problems`] : [];
}
