import * as v from 'valibot';
import { LONE_SURROGATE, maxBytes, patchBody, storableAmount, text, timestamp } from '#lib/schemas/common.ts';

export const PACKAGE_NAME_MAX = 100;
export const COMMAND_MAX = 2000;
export const COMMANDS_MAX = 100;
/**
 * The commands of a package together, as JSON: 100 commands of 2,000 ASCII characters (about
 * 215 KB with their fields) fit, 100 of 2,000 characters of 3-byte UTF-8 (600 KB) would not fit
 * the package's 400 KB item. With the description (at most 30 KB as JSON) and the rest, the
 * package and the answer kept for its Idempotency-Key stay under 300 KB.
 */
export const COMMANDS_BYTES_MAX = 256 * 1024;
/** A delivery delayed by more than a year is a typo, not a plan. */
export const DELAY_SECONDS_MAX = 31_536_000;

const referenceId = (name: string) =>
  v.nullable(v.pipe(v.number(`${name} must be a number or null`), v.safeInteger(`${name} must be an integer`), v.minValue(1, `${name} must be at least 1`)));

const price = storableAmount('price', v.pipe(v.number('price must be a number'), v.minValue(0, 'price must be at least 0')));

/** When a template is queued (extensions section 10); only APPROVED templates are queued at approval for now. */
export const COMMAND_STAGES = ['APPROVED', 'REFUNDED', 'CHARGEBACK', 'EXPIRED'] as const;
export const COMMAND_SERVERS_MAX = 10;
/**
 * Every server a package names is a counted reference (lib/db/server.ts) written in the package's
 * own transaction; 20 keeps that transaction small whatever the templates say.
 */
export const PACKAGE_SERVERS_MAX = 20;

const serverIds = v.nullable(
  v.pipe(
    v.array(
      v.pipe(v.number('a server id must be a number'), v.safeInteger('a server id must be an integer'), v.minValue(1, 'a server id must be at least 1')),
      'servers must be an array of server ids or null',
    ),
    v.minLength(1, 'servers must name at least one server (null: any one server)'),
    v.maxLength(COMMAND_SERVERS_MAX, `servers holds at most ${COMMAND_SERVERS_MAX} server ids`),
    // One command per listed server: a server named twice would run it twice.
    v.transform((ids) => [...new Set(ids)] as number[]),
  ),
);

const command = v.strictObject({
  command: text('command', COMMAND_MAX),
  servers: v.optional(serverIds, null),
  stage: v.optional(v.picklist(COMMAND_STAGES, `stage must be one of ${COMMAND_STAGES.join(', ')}`), 'APPROVED'),
  offline_execute: v.optional(v.boolean('offline_execute must be a boolean'), true),
  delay_seconds: v.optional(
    v.pipe(
      v.number('delay_seconds must be a number'),
      v.integer('delay_seconds must be a whole number of seconds'),
      v.minValue(0, 'delay_seconds must be at least 0'),
      v.maxValue(DELAY_SECONDS_MAX, `delay_seconds must be at most ${DELAY_SECONDS_MAX}`),
    ),
    0,
  ),
});

const commands = v.pipe(
  maxBytes('commands', COMMANDS_BYTES_MAX, v.pipe(v.array(command, 'commands must be an array'), v.maxLength(COMMANDS_MAX, `commands holds at most ${COMMANDS_MAX} commands`))),
  v.check(
    (list) => new Set(list.flatMap((template) => template.servers ?? [])).size <= PACKAGE_SERVERS_MAX,
    `the commands of a package may name at most ${PACKAGE_SERVERS_MAX} different servers`,
  ),
);

/**
 * 5,000 UTF-16 code units are at most 15,000 bytes of UTF-8, DynamoDB's measure: under 4% of the
 * 400 KB item, whatever the script.
 */
export const DESCRIPTION_MAX = 5_000;
export const PACKAGE_TAGS_MAX = 50;
export const EXPIRY_DAYS_MAX = 3650;

/** May be empty (the default): a storefront shows nothing then. */
const description = v.pipe(
  v.string('description must be a string'),
  v.trim(),
  v.maxLength(DESCRIPTION_MAX, `description must be at most ${DESCRIPTION_MAX} characters`),
  v.check((value) => !LONE_SURROGATE.test(value), 'description must be valid Unicode text'),
);

const wholeNumber = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.safeInteger(`${name} must be an integer`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/** Units left; null is unlimited. */
const stock = v.nullable(wholeNumber('stock', 0));
const perCustomerLimit = v.nullable(wholeNumber('per_customer_limit', 1));
const expiryDays = v.nullable(wholeNumber('expiry_days', 1, EXPIRY_DAYS_MAX));
/** Tag ids; duplicates collapse into one. */
const tags = v.pipe(
  v.array(wholeNumber('a tag id', 1), 'tags must be an array of tag ids'),
  v.maxLength(PACKAGE_TAGS_MAX, `tags holds at most ${PACKAGE_TAGS_MAX} tag ids`),
  v.transform((ids) => [...new Set(ids)]),
);

export const packageCreateBody = v.strictObject({
  name: text('name', PACKAGE_NAME_MAX),
  price,
  category_id: v.optional(referenceId('category_id'), null),
  parent_id: v.optional(referenceId('parent_id'), null),
  commands: v.optional(commands, () => []),
  description: v.optional(description, ''),
  enabled: v.optional(v.boolean('enabled must be a boolean'), true),
  stock: v.optional(stock, null),
  per_customer_limit: v.optional(perCustomerLimit, null),
  tags: v.optional(tags, () => []),
  expiry_days: v.optional(expiryDays, null),
});

/** `image` is written only by the upload; PATCH may only remove it. */
const packagePatchFields = v.strictObject({
  name: v.optional(text('name', PACKAGE_NAME_MAX)),
  price: v.optional(price),
  category_id: v.optional(referenceId('category_id')),
  parent_id: v.optional(referenceId('parent_id')),
  image: v.optional(v.null('image can only be set to null here; upload an image with PUT /v1/app/package/{packageId}/image')),
  commands: v.optional(commands),
  description: v.optional(description),
  enabled: v.optional(v.boolean('enabled must be a boolean')),
  stock: v.optional(stock),
  per_customer_limit: v.optional(perCustomerLimit),
  tags: v.optional(tags),
  expiry_days: v.optional(expiryDays),
});

export const packagePatchBody = patchBody(packagePatchFields);

export const packageCommand = v.object({
  command: v.string(),
  // Defaults: what a template written before these fields existed means.
  servers: v.optional(v.nullable(v.array(v.number())), null),
  stage: v.optional(v.picklist(COMMAND_STAGES), 'APPROVED'),
  offline_execute: v.boolean(),
  delay_seconds: v.number(),
});

export const packageResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  price: v.number(),
  category_id: v.nullable(v.number()),
  parent_id: v.nullable(v.number()),
  image: v.nullable(v.string()),
  commands: v.array(packageCommand),
  description: v.string(),
  enabled: v.boolean(),
  stock: v.nullable(v.number()),
  per_customer_limit: v.nullable(v.number()),
  /** The tag ids set on the package that still exist, plus every tag applied to all packages. */
  tags: v.array(v.number()),
  expiry_days: v.nullable(v.number()),
  created_at: timestamp,
  updated_at: timestamp,
});

/** What a package written before these fields existed reads as. */
export const CATALOG_DEFAULTS = { description: '', enabled: true, stock: null, per_customer_limit: null, tags: [], expiry_days: null } as const;

export type PackageCreate = v.InferOutput<typeof packageCreateBody>;
export type PackagePatch = v.InferOutput<typeof packagePatchBody>;
export type Package = v.InferOutput<typeof packageResource>;
export type CommandStage = (typeof COMMAND_STAGES)[number];
