// Inventory backend: the LoopBack `Item` model of the Inventory API (API Connect labs 1–2), in memory.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLargeError, readBody, requestUrl, sendJson, startSampleServer } from './http-server.ts';
import type { RunningSample, SampleServerOptions } from './http-server.ts';

/** Collection path below the API's base path `/api`. */
export const ITEMS_PATH = '/api/items';

/** An inventory item (LoopBack model `Item`). */
export interface Item {
  id: number;
  name: string;
  description: string;
  img: string;
  img_alt: string;
  price: number;
  rating: number;
}

/** Body of a create or replace: everything but the server-assigned id. */
export type ItemInput = Omit<Item, 'id'> & { id?: number };

/** The items a fresh service starts with. */
export const SEED_ITEMS: readonly Item[] = [
  {
    id: 1,
    name: 'Dayton Meat Chopper',
    description:
      "Punched-card tabulating machines and time clocks were not the only products offered by the young IBM. Seen here in 1930, manufacturing employees of IBM's Dayton Scale Company are assembling Dayton Safety Electric Meat Choppers.",
    img: 'images/items/meat-chopper.jpg',
    img_alt: 'Dayton Meat Chopper',
    price: 4599.99,
    rating: 4,
  },
  {
    id: 2,
    name: 'Hollerith Tabulator',
    description:
      'This equipment is representative of the tabulating system invented and built for the U.S. Census Bureau by Herman Hollerith (1860-1929).',
    img: 'images/items/hollerith-tabulator.jpg',
    img_alt: 'Hollerith Tabulator',
    price: 10599.99,
    rating: 5,
  },
  {
    id: 3,
    name: 'Computing Scale',
    description:
      'At the turn of the century, the computing scale was the scale of choice for merchants: it computed the price of an item from its weight.',
    img: 'images/items/computing-scale.jpg',
    img_alt: 'Computing Scale',
    price: 3899.99,
    rating: 3,
  },
  {
    id: 4,
    name: 'Selectric Typewriter',
    description:
      'The Selectric replaced the typebars of earlier typewriters with a golf-ball shaped typing element that pivoted to the right character.',
    img: 'images/items/selectric.jpg',
    img_alt: 'Selectric Typewriter',
    price: 599.99,
    rating: 4,
  },
  {
    id: 5,
    name: 'Magnetic Tape Unit',
    description:
      'The 729 tape drive stored data on half-inch reels, the accessory every mainframe room of the 1950s had to have.',
    img: 'images/items/tape-unit.jpg',
    img_alt: 'IBM 729 Magnetic Tape Unit',
    price: 2499.99,
    rating: 4,
  },
  {
    id: 6,
    name: 'Card Sorter',
    description: 'An electric punched-card sorter that sorted cards into pockets at 400 cards a minute.',
    img: 'images/items/card-sorter.jpg',
    img_alt: 'Punched-card sorter',
    price: 1299.99,
    rating: 3,
  },
];

const FIELDS: Record<keyof ItemInput, 'string' | 'number' | 'integer'> = {
  id: 'integer',
  name: 'string',
  description: 'string',
  img: 'string',
  img_alt: 'string',
  price: 'number',
  rating: 'number',
};
const REQUIRED: readonly (keyof ItemInput)[] = ['name', 'description', 'img', 'price'];
const MAX_STRING = 255;
const MAX_DESCRIPTION = 16_384;
const MAX_ITEMS = 10_000;
const BODY_LIMIT = 64 * 1024;

/** A 4xx answer in LoopBack's error envelope. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function validationError(message: string): HttpError {
  return new HttpError(400, 'ValidationError', `The \`Item\` instance is not valid. ${message}`);
}

function checkField(key: keyof ItemInput, value: unknown): void {
  const kind = FIELDS[key];
  if (kind === 'string') {
    if (typeof value !== 'string') throw validationError(`\`${key}\` must be a string.`);
    const max = key === 'description' ? MAX_DESCRIPTION : MAX_STRING;
    if (value.length > max) throw validationError(`\`${key}\` is longer than ${max} characters.`);
    return;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) throw validationError(`\`${key}\` must be a number.`);
  if (kind === 'integer' && (!Number.isSafeInteger(value) || value < 1))
    throw validationError(`\`${key}\` must be a positive integer.`);
  if (key === 'price' && value < 0) throw validationError('`price` must not be negative.');
  if (key === 'rating' && (value < 0 || value > 5)) throw validationError('`rating` must be between 0 and 5.');
}

/** Validates a create/replace body (additionalProperties: false, as the original definition). */
export function validateItemInput(body: unknown): ItemInput {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw validationError('The body must be a JSON object.');
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(FIELDS, key)) throw validationError(`Unknown property \`${key}\`.`);
  }
  for (const key of REQUIRED) {
    if (record[key] === undefined || record[key] === '') throw validationError(`\`${key}\` can't be blank.`);
  }
  for (const key of Object.keys(record) as (keyof ItemInput)[]) checkField(key, record[key]);
  return {
    ...(record.id === undefined ? {} : { id: record.id as number }),
    name: record.name as string,
    description: record.description as string,
    img: record.img as string,
    img_alt: (record.img_alt as string | undefined) ?? (record.name as string),
    price: record.price as number,
    rating: (record.rating as number | undefined) ?? 0,
  };
}

/** The in-memory item store. */
export class ItemStore {
  private readonly items = new Map<number, Item>();
  private nextId = 1;

  constructor(seed: readonly Item[] = SEED_ITEMS) {
    for (const item of seed) this.put({ ...item });
  }

  list(): Item[] {
    return [...this.items.values()];
  }

  get(id: number): Item | undefined {
    return this.items.get(id);
  }

  create(input: ItemInput): Item {
    if (input.id !== undefined && this.items.has(input.id))
      throw new HttpError(409, 'Conflict', `Item id ${input.id} already exists.`);
    if (this.items.size >= MAX_ITEMS) throw new HttpError(507, 'InsufficientStorage', 'The inventory is full.');
    return this.put({ ...input, id: input.id ?? this.nextId });
  }

  replace(id: number, input: ItemInput): Item | undefined {
    if (!this.items.has(id)) return undefined;
    if (input.id !== undefined && input.id !== id) throw validationError('`id` in the body differs from the path.');
    return this.put({ ...input, id });
  }

  delete(id: number): boolean {
    return this.items.delete(id);
  }

  private put(item: Item): Item {
    this.items.set(item.id, item);
    this.nextId = Math.max(this.nextId, item.id + 1);
    return item;
  }
}

function parseId(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new HttpError(400, 'BadRequest', `Invalid id "${text}".`);
  return Number(text);
}

async function readItem(req: IncomingMessage): Promise<ItemInput> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(contentType)) {
    req.resume();
    throw new HttpError(415, 'UnsupportedMediaType', 'The body must be application/json.');
  }
  let text: string;
  try {
    text = await readBody(req, BODY_LIMIT);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new HttpError(413, 'PayloadTooLarge', error.message);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'SyntaxError', 'The body is not valid JSON.');
  }
  return validateItemInput(body);
}

function notFound(id: number): HttpError {
  return new HttpError(404, 'Error', `Unknown "Item" id "${id}".`);
}

function methodNotAllowed(method: string | undefined, allow: string): HttpError {
  return new HttpError(405, 'MethodNotAllowed', `Method ${method} is not allowed here.`, { allow });
}

async function collection(req: IncomingMessage, res: ServerResponse, store: ItemStore): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    sendJson(res, 200, store.list());
  } else if (req.method === 'POST') {
    sendJson(res, 200, store.create(await readItem(req)));
  } else throw methodNotAllowed(req.method, 'GET, HEAD, POST');
}

async function member(req: IncomingMessage, res: ServerResponse, store: ItemStore, id: number): Promise<void> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    const item = store.get(id);
    if (!item) throw notFound(id);
    sendJson(res, 200, item);
  } else if (req.method === 'PUT') {
    const item = store.replace(id, await readItem(req));
    if (!item) throw notFound(id);
    sendJson(res, 200, item);
  } else if (req.method === 'DELETE') {
    req.resume();
    if (!store.delete(id)) throw notFound(id);
    // LoopBack's deleteById answers with the number of deleted instances.
    sendJson(res, 200, { count: 1 });
  } else throw methodNotAllowed(req.method, 'GET, HEAD, PUT, DELETE');
}

/** Returns the handler of an inventory service backed by `store`. */
export function inventoryHandler(store: ItemStore) {
  return async function inventory(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Express, under LoopBack, matches paths case-insensitively: /api/Items works too.
    const path = requestUrl(req).pathname.toLowerCase().replace(/\/+$/, '');
    try {
      if (path === ITEMS_PATH) await collection(req, res, store);
      else if (path.startsWith(`${ITEMS_PATH}/`) && !path.slice(ITEMS_PATH.length + 1).includes('/')) {
        await member(req, res, store, parseId(path.slice(ITEMS_PATH.length + 1)));
      } else throw new HttpError(404, 'Error', `There is no method to handle ${req.method} ${path}`);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      req.resume();
      const body = { error: { statusCode: error.status, name: error.errorName, message: error.message } };
      sendJson(res, error.status, body, error.headers);
    }
  };
}

/** Starts the inventory service (default demo port 9084) with a fresh copy of the seed items. */
export function startInventoryService(options: SampleServerOptions): Promise<RunningSample> {
  return startSampleServer('inventory', inventoryHandler(new ItemStore()), options);
}
