/**
 * A backend's answer with its content coding undone (content-coding.ts): the consumer's
 * `Accept-Encoding` reaches the backend, so a compressing backend would otherwise hand the flow
 * a body no policy can read, and a body a policy rewrites would go out still labelled `gzip`.
 * Codings the gateway cannot decode pass through as they came, with their field.
 */
import { contentCodings, decodeContent } from '../../http/content-coding.ts';
import type { DecodeOptions } from '../../http/content-coding.ts';
import type { BackendAnswer } from './exchange.ts';

/**
 * `answer` with a gzip, deflate or br body decoded (bounded by `options.limit`) and no
 * `Content-Encoding`. An answer with no coding to undo comes back as it is, at once: no async
 * frame and promise on the common path (~350 bytes a call, bench/README.md Session 18).
 */
export function decodeAnswer(answer: BackendAnswer, options: DecodeOptions): BackendAnswer | Promise<BackendAnswer> {
  const codings = contentCodings(answer.headers['content-encoding']);
  if (codings === undefined || codings.length === 0) return answer;
  return decoded(answer, codings, options);
}

async function decoded(answer: BackendAnswer, codings: string[], options: DecodeOptions): Promise<BackendAnswer> {
  const body = await decodeContent(answer.body, codings, options);
  const headers = { ...answer.headers };
  delete headers['content-encoding'];
  return { statusCode: answer.statusCode, headers, body };
}
