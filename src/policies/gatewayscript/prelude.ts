/**
 * The script API as it exists inside the sandbox, written in plain ES5 and evaluated once per
 * engine. It builds, once, the frozen objects API Connect scripts use from one host function, `host(op, …)`,
 * through which only strings cross (values travel as JSON): the DataPower API Gateway
 * `context` object (IBM "Using context variables in GatewayScript and XSLT policies with the
 * DataPower API Gateway"), the v5 `apim` module (`getvariable`, `setvariable`, `output`,
 * `error`), `require` for that module only, `console`, and a minimal `session`.
 *
 * Builtins that allocate a large array or string in one native call check the heap budget
 * first. Then it locks the realm down: every intrinsic reachable from `globalThis` is frozen and the
 * existing globals move to a frozen object that becomes the global's prototype (found by name as
 * before, read-only), so one request's script cannot leave state (a patched prototype, a replaced
 * `JSON`) for the next; the global's own properties a script creates are deleted after each run
 * (`cleanup`), and one that cannot be deleted, a replaced prototype or a non-extensible global
 * makes the host rebuild the engine.
 *
 * The evaluated expression yields `{seal(user), run(user), cleanup(), raise(message)}`: `run` calls the compiled
 * user function with the API objects and then `cleanup`, answering 1 if it said 'ok'; when the run
 * left promise jobs, or threw, the host calls `cleanup` again once they are over, and rebuilds the
 * engine unless it answers 'ok'.
 */
import { randomFillSync } from 'node:crypto';

export const preludeSource = String.raw`(function (host) {
  'use strict';
  var parse = JSON.parse, stringify = JSON.stringify;
  var ErrorType = Error, RangeErrorType = RangeError, SyntaxErrorType = SyntaxError;
  // Taken now: the sealing below moves the intrinsics off the global object, and during a run a
  // script may give the global an own property of any name (Reflect, Object…) that would shadow
  // one for the rest of it; the clean-up must not use what it finds by name.
  var ownKeys = Reflect.ownKeys, deleteProperty = Reflect.deleteProperty, freeze = Object.freeze;
  var getPrototypeOf = Object.getPrototypeOf, setPrototypeOf = Object.setPrototypeOf, isExtensible = Object.isExtensible;
  var describe = Object.getOwnPropertyDescriptor, define = Object.defineProperty;
  var headerName = /^[!#$%&'*+\-.^_\x60|~0-9A-Za-z]+$/;
  // A body's own JSON text comes marked (rawJsonMark, read-ahead.ts): its value is its parse, or
  // the text itself when it does not parse, as the gateway reads a body (context.ts, parseRawBody).
  // Bytes (a binary body) come and go as base64 after U+0002 (bytesMark): a Uint8Array here.
  var Bytes = Uint8Array, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  var codes = new Bytes(128);
  for (var c = 0; c < 64; c++) codes[alphabet.charCodeAt(c)] = c;
  function bytesFromHost(text) {
    var end = text.length;
    while (end > 1 && text.charCodeAt(end - 1) === 61) end--;
    var n = end - 1, full = end - n % 4, out = new Bytes((n * 3) >> 2), o = 0, v, i;
    for (i = 1; i < full; i += 4) {
      v = (codes[text.charCodeAt(i)] << 18) | (codes[text.charCodeAt(i + 1)] << 12) |
        (codes[text.charCodeAt(i + 2)] << 6) | codes[text.charCodeAt(i + 3)];
      out[o++] = v >> 16; out[o++] = v >> 8; out[o++] = v;
    }
    if (end - full > 1) {
      v = (codes[text.charCodeAt(full)] << 18) | (codes[text.charCodeAt(full + 1)] << 12) |
        (end - full > 2 ? codes[text.charCodeAt(full + 2)] << 6 : 0);
      out[o++] = v >> 16;
      if (end - full > 2) out[o++] = v >> 8;
    }
    return out;
  }
  function bytesToHost(bytes) {
    var parts = ['\u0002'], chunk = '', n = bytes.length, i, v;
    for (i = 0; i + 2 < n; i += 3) {
      v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      chunk += alphabet.charAt(v >> 18) + alphabet.charAt((v >> 12) & 63) + alphabet.charAt((v >> 6) & 63) + alphabet.charAt(v & 63);
      if (chunk.length >= 8192) { parts.push(chunk); chunk = ''; }
    }
    if (i < n) {
      v = (bytes[i] << 16) | (i + 1 < n ? bytes[i + 1] << 8 : 0);
      chunk += alphabet.charAt(v >> 18) + alphabet.charAt((v >> 12) & 63) + (i + 1 < n ? alphabet.charAt((v >> 6) & 63) : '=') + '=';
    }
    parts.push(chunk);
    return parts.join('');
  }
  function toHost(value) { return value === undefined ? undefined : value instanceof Bytes ? bytesToHost(value) : stringify(value); }
  function fromHost(text) {
    if (text === undefined) return undefined;
    if (text.charCodeAt(0) === 2) return bytesFromHost(text);
    if (text.charCodeAt(0) !== 1) return parse(text);
    var raw = text.slice(1);
    try { return parse(raw); } catch (e) { if (e instanceof SyntaxErrorType) return raw; throw e; }
  }
  function get(name) { return fromHost(host('get', String(name))); }
  function set(name, value) { host('set', String(name), toHost(value)); }
  function add(name, value) { host('add', String(name), toHost(value)); }
  function clear(name) { host('clear', String(name)); }
  function headerPath(variable, name) {
    name = String(name);
    if (!headerName.test(name)) throw new TypeError('invalid header name: ' + name);
    return variable + '.headers["' + name + '"]';
  }
  function reader(variable) {
    return {
      readAsJSON: function (callback) {
        var value = get(variable), error = null;
        if (value instanceof Bytes) { error = new SyntaxErrorType('the body is bytes, not JSON'); value = undefined; }
        if (typeof value === 'string') {
          try { value = parse(value); } catch (e) { error = e; value = undefined; }
        }
        callback(error, value);
      },
      readAsBuffer: function (callback) {
        var value = get(variable);
        callback(null, value === undefined ? '' : typeof value === 'string' || value instanceof Bytes ? value : stringify(value));
      },
      write: function (value) { set(variable, value); }
    };
  }
  function headers(variable, writable) {
    var api = { get: function (name) { return get(headerPath(variable, name)); } };
    if (writable) {
      api.set = function (name, value) { set(headerPath(variable, name), String(value)); };
      api.remove = function (name) { clear(headerPath(variable, name)); };
    }
    return api;
  }
  function format(args) {
    var parts = [];
    for (var i = 0; i < args.length; i++) {
      var value = args[i];
      if (typeof value === 'string') parts.push(value);
      else { try { parts.push(stringify(value)); } catch (e) { parts.push(String(value)); } }
    }
    return parts.join(' ');
  }
  function makeApi() {
    var message = {
      body: reader('message.body'),
      header: headers('message', true),
      get headers() { return get('message.headers'); },
      get statusCode() { return get('message.status.code'); },
      set statusCode(code) { var text = String(code); var n = parseInt(text, 10); set('message.status.code', n); if (/^\d+\s+\S/.test(text)) set('message.status.reason', text.replace(/^\d+\s+/, '')); },
      get reasonPhrase() { return get('message.status.reason'); },
      set reasonPhrase(reason) { set('message.status.reason', String(reason)); }
    };
    var request = {
      body: reader('request.body'),
      header: headers('request', false),
      get verb() { return get('request.verb'); },
      get method() { return get('request.verb'); },
      get uri() { return get('request.uri'); },
      get path() { return get('request.path'); },
      get search() { return get('request.search'); },
      get headers() { return get('request.headers'); },
      get parameters() { return get('request.parameters'); },
      get contentType() { return get('request.content-type'); }
    };
    var context = {
      get: get, set: set, clear: clear, message: message, request: request,
      reject: function (name, text) { host('reject', String(name), text === undefined ? '' : String(text)); }
    };
    var apim = {
      getvariable: get,
      setvariable: function (name, value, action) {
        if (action === 'clear') clear(name);
        else if (action === 'add') add(name, value);
        else set(name, value);
      },
      output: function (contentType) { set('message.headers.content-type', String(contentType)); },
      error: function (name, status, reason, text) {
        host('error', stringify([String(name), Number(status) || 500, reason === undefined ? '' : String(reason), text === undefined ? '' : String(text)]));
      }
    };
    var require = function (id) {
      if (id === 'apim' || id === 'local:///isp/policy/apim.custom.js' || id === 'local://isp/policy/apim.custom.js') return apim;
      throw new Error("Cannot find module '" + id + "': only the apim module is available in a GatewayScript policy");
    };
    var log = function (level) { return function () { host('log', level, format(arguments)); }; };
    var console = { log: log('info'), info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
    var session = {
      input: reader('message.body'),
      output: { write: function (value) { set('message.body', value); } },
      reject: function (text) { host('reject', 'JavaScriptError', String(text)); }
    };
    return [context, apim, require, console, session];
  }

  var seen = [];
  function freezeAll(value) {
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.indexOf(value) >= 0) return;
    seen.push(value);
    freeze(value);
    freezeAll(getPrototypeOf(value));
    var keys = ownKeys(value);
    for (var i = 0; i < keys.length; i++) {
      var descriptor = describe(value, keys[i]);
      if (descriptor === undefined) continue;
      if ('value' in descriptor) freezeAll(descriptor.value);
      if (descriptor.get) freezeAll(descriptor.get);
      if (descriptor.set) freezeAll(descriptor.set);
    }
  }
  // Builtins that allocate a whole array or string in one native call never reach the
  // interrupt handler, so each checks the heap budget first (see sandbox.ts, wasmHeapBytes).
  var apply = Reflect.apply;
  function guard(owner, name) {
    var original = owner[name];
    owner[name] = function () {
      if (host('mem') !== undefined) throw new RangeErrorType('out of memory');
      return apply(original, this, arguments);
    };
  }
  guard(Array.prototype, 'fill');
  guard(Array.prototype, 'concat');
  guard(Array.prototype, 'map');
  guard(Array.prototype, 'slice');
  guard(Array, 'from');
  guard(String.prototype, 'repeat');
  guard(String.prototype, 'padStart');
  guard(String.prototype, 'padEnd');
  guard(Array.prototype, 'join');
  guard(JSON, 'stringify');
  // Bytes inside a larger value written to the context are their numbers (a list), not an object
  // keyed by index; only a Uint8Array written whole is bytes again (bytesToHost).
  define(Bytes.prototype, 'toJSON', { value: function toJSON() { return Array.from(this); } });
  // Math.random draws on the host's cryptographic generator, 64 numbers at a time (randomNumbers
  // below): QuickJS's own xorshift state is one per engine, shared by every run, and two numbers
  // one consumer's answer showed gave away the next consumer's (found by a review, Session 15).
  var randoms = [], nextRandom = 0;
  Math.random = function random() {
    if (nextRandom >= randoms.length) {
      randoms = parse(host('random'));
      nextRandom = 0;
    }
    return randoms[nextRandom++];
  };
  // Intrinsics no global property reaches: the iterator, generator and async-function prototypes
  // (and through them their constructors) exist once per engine and are found only through the
  // objects syntax makes. Left writable, one run could hang a closure on one (an iterator's next)
  // that later runs inside other consumers' requests, with their context.
  var hidden = [[][Symbol.iterator](), ''[Symbol.iterator](), new Map().entries(), new Set().values(),
    /a/g[Symbol.matchAll](''), function* () {}, async function () {}, async function* () {}];
  if (typeof Iterator === 'function' && typeof Iterator.from === 'function') {
    hidden.push(Iterator.from({ next: function () { return { done: true }; } }));
    if (typeof Iterator.prototype.map === 'function') hidden.push([].values().map(function (x) { return x; }));
  }
  for (var h = 0; h < hidden.length; h++) freezeAll(getPrototypeOf(hidden[h]));
  var global = globalThis;
  // A finalizer or weak reference could run one request's closure during a later request.
  delete global.FinalizationRegistry;
  delete global.WeakRef;
  // The intrinsics move from the global object to a frozen object that becomes its prototype:
  // scripts find them by name as before, and cannot replace them (an inherited read-only property
  // refuses assignment). The global keeps only what the language makes permanent (undefined, NaN,
  // Infinity), so the clean-up after each run reads the keys of a three-key object: reading the
  // global's sixty was most of a short script's run (issue 18). Until the new prototype is set,
  // a moved intrinsic is not found by name: everything here uses the functions taken above.
  var intrinsics = Object.create(getPrototypeOf(global));
  var permanent = Object.create(null), permanentCount = 0;
  seen.push(global);
  var names = ownKeys(global);
  for (var i = 0; i < names.length; i++) {
    var descriptor = describe(global, names[i]);
    if (descriptor.value !== global) freezeAll(descriptor.value);
    if (descriptor.get) freezeAll(descriptor.get);
    if (descriptor.set) freezeAll(descriptor.set);
    if (descriptor.configurable) {
      define(intrinsics, names[i], descriptor);
      deleteProperty(global, names[i]);
    } else {
      permanent[names[i]] = true;
      permanentCount++;
    }
  }
  setPrototypeOf(global, intrinsics);
  freezeAll(intrinsics);
  // The API objects hold no per-request state (every call goes to the host), so one frozen
  // set serves every run.
  var api = makeApi();
  freezeAll(api);
  // Reflect.deleteProperty reports a non-configurable global instead of throwing (a strict-mode
  // delete would throw before the host learns the realm is dirty); any failure here is 'tainted'.
  // The global's prototype cannot be made anything but the intrinsics again once changed, nor
  // the global extensible again once it is not: either one makes the host rebuild the engine.
  function cleanup() {
    try {
      var keys = ownKeys(global), clean = true;
      if (keys.length === permanentCount && getPrototypeOf(global) === intrinsics && isExtensible(global)) return 'ok';
      for (var j = 0; j < keys.length; j++) {
        var key = keys[j];
        if (typeof key === 'string' && permanent[key] === true) continue;
        if (!deleteProperty(global, key)) clean = false;
      }
      return clean && getPrototypeOf(global) === intrinsics && isExtensible(global) ? 'ok' : 'tainted';
    } catch (e) {
      return 'tainted';
    }
  }
  return {
    // The user function is frozen too: arguments.callee.x = … must not carry state either.
    seal: function seal(user) { freezeAll(user); },
    // Answers 1 when the realm is clean right after the script returned: with no promise job
    // queued, the host needs no separate cleanup call (one call into the engine per run, not two).
    run: function run(user) { user(api[0], api[1], api[2], api[3], api[4]); return cleanup() === 'ok' ? 1 : 0; },
    // Called by the host after the run's promise jobs (or a failed run); anything but 'ok' rebuilds the engine.
    cleanup: cleanup,
    // The host's errors are made here: an Error's own message, whatever Error.prototype allows.
    raise: function raise(message) { return new ErrorType(message); }
  };
})`;

/**
 * Starts a host answer that is a body's raw JSON text rather than JSON the gateway wrote: no JSON
 * text begins with U+0001.
 */
export const rawJsonMark = '\u0001';

/**
 * Starts a value that is bytes, as base64, in either direction: no JSON text begins with U+0002.
 * The script sees and writes such a value as a Uint8Array.
 */
export const bytesMark = '\u0002';

/** Wraps a policy's source as a function of the API objects, keeping its line numbers. */
export function wrapUserSource(source: string): string {
  return `(function (context, apim, require, console, session) {${source}\n})`;
}

/** The line a QuickJS stack names, as ` (line N)`. */
export function lineOf(stack: string | undefined): string {
  const match = /:(\d+)(?::(\d+))?\)?\s*$/m.exec(stack ?? '');
  return match === null ? '' : ` (line ${match[1]})`;
}

const randomWords = new Uint32Array(128);

/** The host's answer to the prelude's `host('random')`: 64 numbers in [0, 1) of 53 random bits each, as JSON. */
export function randomNumbers(): string {
  randomFillSync(randomWords);
  const numbers = new Array<number>(64);
  for (let i = 0; i < 64; i++) numbers[i] = ((randomWords[2 * i] >>> 11) * 2 ** 32 + randomWords[2 * i + 1]) / 2 ** 53;
  return JSON.stringify(numbers);
}
