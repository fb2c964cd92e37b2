/**
 * What the enqueue tests share: a message map, loops that record what ran, and transactions on a
 * client of the test's own.
 */
import { createLoop, type Loop } from '@flowing/core'
import pg from 'pg'
import { createEnqueuer, type Enqueuer, type PostgresStore } from '../src/index.js'
import type { Database } from './fixtures.js'

/** The messages of the enqueue tests. */
export interface Mail {
  email: { to: string; n: number }
  invoice: { id: number }
}

/** A loop on `store` that records each `email` it starts (its `n`, and when). */
export interface Recorder {
  readonly loop: Loop<Mail>
  readonly store: PostgresStore
  /** `n` of each email started, in start order. */
  readonly ran: number[]
  /** When each started (`performance.now()`), by `n`. */
  readonly startedAt: Map<number, number>
  /** Wall time (`Date.now()`) each started, by `n`. */
  readonly wallAt: Map<number, number>
}

/** Starts a loop on `store` that records its emails. */
export function recorder(store: PostgresStore): Recorder {
  const loop = createLoop<Mail>({ store, logger: false })
  const r: Recorder = { loop, store, ran: [], startedAt: new Map(), wallAt: new Map() }
  loop.on('email', (m) => {
    r.ran.push(m.payload.n)
    r.startedAt.set(m.payload.n, performance.now())
    r.wallAt.set(m.payload.n, Date.now())
  })
  loop.on('invoice', () => {})
  loop.start()
  return r
}

/** An enqueuer of the test's journal. */
export function enqueuerOf(db: Database): Enqueuer<Mail> {
  return createEnqueuer<Mail>({ journal: db.journal(), types: ['email', 'invoice'] })
}

/** A client of the test database's own (ended by `end()`), as an application holds one. */
export async function appClient(db: Database): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  return client
}

/** Runs `body` in a transaction on `client`: COMMIT if it resolves, ROLLBACK if it throws. */
export async function inTransaction<T>(client: pg.ClientBase, body: () => Promise<T>): Promise<T> {
  await client.query('BEGIN')
  try {
    const value = await body()
    await client.query('COMMIT')
    return value
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}

/** Stops each loop (its store is closed by the test's `afterEach`). */
export async function stopAll(...recorders: Recorder[]): Promise<void> {
  await Promise.all(recorders.map((r) => r.loop.stop()))
}

/** Resolves after `ms` of real time. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
