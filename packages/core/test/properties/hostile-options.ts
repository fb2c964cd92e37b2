/**
 * Hostile options for the API's entry points (issue 12, BRIEF I7): a valid options object per entry
 * point, and one mutation of it — a typo (one character changed in a known key, at the top or one
 * level down), a value of the wrong type, a throwing Proxy or a revoked one (as the whole options or
 * as one value), a getter that throws a hostile value.
 *
 * Mutations are plain data and `build()` makes the options inside the run: fast-check would trip over
 * a Proxy it generated itself.
 */
import fc from 'fast-check'
import { LOOP_OPTION_KEYS } from '../../src/options/resolve.js'
import { hostileOrAnything, revokedProxy, type Thrown, throwingProxy } from '../hostile.js'

/** The entry points that take options. */
export type Surface = 'createLoop' | 'post' | 'tryPost' | 'postDelayed' | 'on' | 'route' | 'router.on' | 'stop'

export const SURFACES: readonly Surface[] = [
  'createLoop',
  'post',
  'tryPost',
  'postDelayed',
  'on',
  'route',
  'router.on',
  'stop',
]

const LOOP_KEYS: readonly string[] = LOOP_OPTION_KEYS
const POST_KEYS = [
  'key',
  'priority',
  'overflow',
  'handlerTimeoutMs',
  'retry',
  'idempotencyKey',
  'headers',
  'group',
  'signal',
]
const REGISTER_KEYS = ['replace', 'timeoutMs', 'heartbeatMs', 'compensate', 'retry', 'circuitBreaker', 'rateLimit']

/** Known keys of the nested option objects a typo may hit. */
const NESTED_KEYS: Readonly<Record<string, readonly string[]>> = {
  retry: ['maxAttempts', 'unknownMaxAttempts', 'baseMs', 'factor', 'capMs', 'jitter', 'jitterStrategy', 'order'],
  circuitBreaker: [
    'per',
    'consecutiveFailures',
    'failureRate',
    'windowMs',
    'minVolume',
    'cooldownMs',
    'probes',
    'probeTimeoutMs',
  ],
  timeoutBreaker: ['threshold', 'cooldownMs'],
  deadLetters: ['maxSize', 'sink'],
  alerts: ['windowMs', 'threshold', 'top', 'onAlert'],
  idempotency: ['store', 'ttlMs', 'maxKeys', 'failed', 'dedupe'],
  rateLimit: ['max', 'perMs', 'per'],
  groups: ['concurrency', 'rateLimit', 'overrides'],
  gate: ['open', 'pollMs'],
  timeLimit: ['maxRunMs', 'deadlineMs', 'onSnapshot'],
}

/** Every key an entry point knows (a typo must not land on one). */
export const KNOWN: Readonly<Record<Surface, readonly string[]>> = {
  createLoop: LOOP_KEYS,
  post: POST_KEYS,
  tryPost: POST_KEYS,
  postDelayed: POST_KEYS,
  on: REGISTER_KEYS,
  route: REGISTER_KEYS,
  'router.on': ['replace'],
  stop: ['drain', 'deadlineMs', 'signal'],
}

/** A valid options object per entry point; `clock` and `logger` are added to the loop's after mutation. */
export function base(surface: Surface): Record<string, unknown> {
  switch (surface) {
    case 'createLoop':
      return {
        workers: 2,
        capacity: 10,
        overflow: 'drop-new',
        timeoutMs: 50,
        graceMs: 10,
        queue: 'heap',
        agingMs: 10,
        defaultPriority: 4,
        idPrefix: 'hx',
        traces: 'all',
        keepTraces: 3,
        maxHops: 4,
        retry: { maxAttempts: 2, baseMs: 5, order: 'unordered' },
        circuitBreaker: { consecutiveFailures: 2, cooldownMs: 10 },
        timeoutBreaker: { threshold: 2, cooldownMs: 10 },
        deadLetters: { maxSize: 5 },
        alerts: { threshold: 2, windowMs: 100 },
        idempotency: { ttlMs: 100, maxKeys: 10 },
        messageLog: { info: () => {}, warn: () => {} },
        backpressure: false,
        stall: false,
        failureExit: false,
        rateLimit: { max: 50, perMs: 10, per: 'type' },
        groups: { concurrency: 2, rateLimit: { max: 9, perMs: 10 } },
        gate: { open: () => true, pollMs: 5 },
        timeLimit: { maxRunMs: 60_000, deadlineMs: 5 },
      }
    case 'post':
    case 'tryPost':
    case 'postDelayed':
      return {
        key: 'a',
        priority: 3,
        overflow: 'drop-new',
        handlerTimeoutMs: 20,
        retry: { maxAttempts: 2, baseMs: 5 },
        idempotencyKey: 'idem',
        group: 'g',
      }
    case 'on':
    case 'route':
      return {
        timeoutMs: 10,
        heartbeatMs: 5,
        replace: false,
        compensate: () => {},
        retry: { maxAttempts: 2 },
        circuitBreaker: { consecutiveFailures: 2 },
        rateLimit: { max: 7, perMs: 10, per: 'key' },
      }
    case 'router.on':
      return { replace: false }
    case 'stop':
      return { drain: true, deadlineMs: 10, signal: new AbortController().signal }
  }
}

/** One mutation of the base options. `pick`, `at` and `letter` choose among what the base offers. */
export type Mutation =
  | {
      readonly kind: 'typo'
      readonly nested: boolean
      readonly pick: number
      readonly at: number
      readonly letter: string
    }
  | { readonly kind: 'wrong-type'; readonly nested: boolean; readonly pick: number; readonly value: number }
  | { readonly kind: 'proxy-value' | 'revoked-value'; readonly pick: number }
  | { readonly kind: 'getter'; readonly nested: boolean; readonly pick: number; readonly thrown: Thrown }
  | { readonly kind: 'proxy-options' | 'revoked-options' }
  | { readonly kind: 'wrong-options'; readonly value: number }

/** Values of the wrong type (or of the right type, out of range); some happen to be valid somewhere. */
const WRONG: readonly (() => unknown)[] = [
  () => '5',
  () => -1,
  () => 0.5,
  () => Number.NaN,
  () => Number.POSITIVE_INFINITY,
  () => null,
  () => true,
  () => ({}),
  () => [],
  () => () => 1,
  () => Symbol('s'),
  () => 10n,
  () => new Date(0),
  () => Object.create(null),
]

const pickArb = fc.nat()
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('typo' as const),
    nested: fc.boolean(),
    pick: pickArb,
    at: fc.nat(),
    letter: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzQ_'),
  }),
  fc.record({
    kind: fc.constant('wrong-type' as const),
    nested: fc.boolean(),
    pick: pickArb,
    value: fc.nat({ max: WRONG.length - 1 }),
  }),
  fc.record({ kind: fc.constantFrom('proxy-value' as const, 'revoked-value' as const), pick: pickArb }),
  fc.record({ kind: fc.constant('getter' as const), nested: fc.boolean(), pick: pickArb, thrown: hostileOrAnything() }),
  fc.record({ kind: fc.constantFrom('proxy-options' as const, 'revoked-options' as const) }),
  fc.record({ kind: fc.constant('wrong-options' as const), value: fc.nat({ max: WRONG.length - 1 }) }),
)

/** The options to pass, and the option an error must name (`options`, `options.retry`, …). */
export interface Built {
  readonly options: unknown
  readonly names: string
  /** The top-level option the mutation hit (`undefined` for the whole options). */
  readonly top: string | undefined
  /** Whether it hit a key inside that option's object. */
  readonly nested: boolean
  /** What was done, for the counterexample report. */
  readonly label: string
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype

/**
 * Applies `m` to the base options of `surface` (inside the run); `fixed` joins the base first and is
 * never mutated (the loop's virtual `clock` and `logger: false`).
 */
export function build(surface: Surface, m: Mutation, fixed: Record<string, unknown> = {}): Built {
  const o = { ...base(surface), ...fixed }
  const keys = Object.keys(o).filter((k) => !(k in fixed))
  const key = 'pick' in m ? (keys[m.pick % keys.length] as string) : ''
  switch (m.kind) {
    case 'proxy-options':
      return {
        options: throwingProxy(o),
        names: 'options',
        top: undefined,
        nested: false,
        label: 'options: a Proxy whose traps throw',
      }
    case 'revoked-options':
      return {
        options: revokedProxy(),
        names: 'options',
        top: undefined,
        nested: false,
        label: 'options: a revoked Proxy',
      }
    case 'wrong-options': {
      const value = (WRONG[m.value] as () => unknown)()
      return { options: value, names: 'options', top: undefined, nested: false, label: `options: WRONG[${m.value}]` }
    }
    case 'proxy-value':
      o[key] = throwingProxy({})
      return {
        options: o,
        names: `options.${key}`,
        top: key,
        nested: false,
        label: `${key}: a Proxy whose traps throw`,
      }
    case 'revoked-value':
      o[key] = revokedProxy()
      return { options: o, names: `options.${key}`, top: key, nested: false, label: `${key}: a revoked Proxy` }
  }
  const inner = o[key]
  const nested = m.nested && isObject(inner) && NESTED_KEYS[key] !== undefined
  const [target, path, known] = nested
    ? [inner, `options.${key}`, NESTED_KEYS[key] as readonly string[]]
    : [o, 'options', KNOWN[surface]]
  const targetKeys = Object.keys(target).filter((k) => target !== o || !(k in fixed))
  const k = targetKeys[m.pick % targetKeys.length] as string
  const hit = { top: nested ? key : k, nested }
  if (m.kind === 'wrong-type') {
    target[k] = (WRONG[m.value] as () => unknown)()
    return { options: o, names: `${path}.${k}`, ...hit, label: `${path}.${k}: WRONG[${m.value}]` }
  }
  if (m.kind === 'getter') {
    Object.defineProperty(target, k, {
      enumerable: true,
      get: () => {
        throw m.thrown.make()
      },
    })
    return { options: o, names: `${path}.${k}`, ...hit, label: `${path}.${k}: a getter that throws ${m.thrown.label}` }
  }
  const at = m.at % k.length
  let typo = k.slice(0, at) + m.letter + k.slice(at + 1)
  if (typo === k || known.includes(typo)) typo = `${k}Q` // not a typo of one char, but never a known key
  const value = target[k]
  delete target[k]
  target[typo] = value
  return { options: o, names: `${path}.${typo}`, ...hit, label: `${path}: ${k} → ${typo}` }
}
