/**
 * The bounds on a definition document's text, checked while it is read, before any check walks
 * it: a small import runs on the thread that also serves the gateway (`--role all`), a large
 * one on a worker that other imports wait for, so a hostile document must be refused in time
 * and memory proportional to these bounds, not to its own shape. Real API Connect documents
 * (a few thousand operations, nested < 50 deep, 10–15 characters per value or key) stay far
 * inside them.
 */

export const documentLimits = {
  /** Characters of text: the management API's body limit (10 MiB), for files read any other way too. */
  maxChars: 10 * 1024 * 1024,
  /** Levels of nesting (the root object is level 1); every walk over a document stays this shallow. */
  maxDepth: 100,
  /** Values and keys, YAML aliases counted as the values they stand for. */
  maxNodes: 1_000_000,
} as const;

/** Why a text cannot be read, and the offset in the text it is about (for line and column). */
export class TextProblem extends Error {
  constructor(
    readonly reason: string,
    readonly offset: number | undefined,
  ) {
    super(reason);
  }
}

export const tooDeep = `nested deeper than ${documentLimits.maxDepth} levels`;
export const tooManyNodes = `more than ${documentLimits.maxNodes.toLocaleString('en-US')} values and keys`;
