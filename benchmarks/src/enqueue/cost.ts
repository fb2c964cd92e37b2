/**
 * What an enqueue adds to the application's transaction: the same transaction — BEGIN, INSERT of an
 * application row, one more write, COMMIT — timed with each candidate as that one more write, side by
 * side and interleaved (each round runs every candidate in turn), on one connection of the app's own.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import type { Enqueuer } from '@flowing/postgres'
import type pg from 'pg'
import { PgBoss } from 'pg-boss'

/** The message every candidate writes. */
export interface Signup {
  readonly 'email.welcome': { readonly userId: string; readonly to: string; readonly template: string }
}

/** One way to write the message inside the transaction. */
export interface Candidate {
  readonly label: string
  /** Writes the message for `userId` on `client`, inside its open transaction. */
  write(client: pg.Client, userId: string, payload: Signup['email.welcome']): Promise<unknown>
}

/** The time of each transaction of a candidate, in ms. */
export interface CostSample {
  readonly label: string
  readonly ms: number[]
}

/** The tables the transactions write: the application's users, and a plain table like an outbox. */
export async function createAppTables(client: pg.Client): Promise<void> {
  await client.query(
    'CREATE TABLE users (id uuid PRIMARY KEY, email text NOT NULL, created_at timestamptz DEFAULT now())',
  )
  await client.query('CREATE TABLE outbox (id uuid PRIMARY KEY, type text NOT NULL, body json NOT NULL)')
}

/** The candidates: nothing more, a plain INSERT, Flowing's enqueue (without and with a key), pg-boss's send. */
export function candidates(enqueuer: Enqueuer<Signup>, boss: PgBoss): Candidate[] {
  return [
    { label: 'app row only (the baseline)', write: async () => undefined },
    {
      label: '+ plain INSERT of a similar row',
      write: (client, _id, payload) =>
        client.query('INSERT INTO outbox (id, type, body) VALUES ($1, $2, $3)', [
          randomUUID(),
          'email.welcome',
          JSON.stringify(payload),
        ]),
    },
    {
      label: '+ Flowing enqueue()',
      write: (client, _id, payload) => enqueuer.enqueue(client, 'email.welcome', payload),
    },
    {
      label: '+ Flowing enqueue() with an idempotency key',
      write: (client, id, payload) =>
        enqueuer.enqueue(client, 'email.welcome', payload, { idempotencyKey: `welcome:${id}` }),
    },
    {
      label: '+ pg-boss 12 send() in the transaction (db option)',
      write: (client, _id, payload) =>
        boss.send('email-welcome', payload, { db: { executeSql: (text, values) => client.query(text, values) } }),
    },
  ]
}

/** Runs `perRound` transactions of each candidate per round, interleaved, and times each. */
export async function measureCost(
  client: pg.Client,
  list: readonly Candidate[],
  rounds: number,
  perRound: number,
): Promise<CostSample[]> {
  const samples = list.map((c) => ({ label: c.label, ms: [] as number[] }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, candidate] of list.entries()) {
      for (let n = 0; n < perRound; n++) samples[i]?.ms.push(await oneTransaction(client, candidate))
    }
  }
  return samples
}

async function oneTransaction(client: pg.Client, candidate: Candidate): Promise<number> {
  const id = randomUUID()
  const email = `user-${id}@example.com`
  const started = performance.now()
  await client.query('BEGIN')
  await client.query('INSERT INTO users (id, email) VALUES ($1, $2)', [id, email])
  await candidate.write(client, id, { userId: id, to: email, template: 'welcome-v2' })
  await client.query('COMMIT')
  return performance.now() - started
}

/** A started pg-boss with the queue, on its own pool (its maintenance off: only `send` is measured). */
export async function startBoss(url: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false, max: 2 })
  boss.on('error', () => {})
  await boss.start()
  await boss.createQueue('email-welcome')
  return boss
}
