import { createLoop, InvalidArgumentError, VirtualClock } from '@flowing/core'
import { Counter, Registry, register } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { MetricsRegisteredError, prometheus } from '../src/index.js'
import { value } from './scrape.js'

function loop() {
  const clock = new VirtualClock()
  const l = createLoop<{ ship: number }>({ clock, logger: false })
  l.on('ship', () => {})
  return { clock, loop: l }
}

function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe('prometheus()', () => {
  describe('registration', () => {
    it("uses prom-client's default registry when none is given", async () => {
      const { clock, loop: l } = loop()
      const exporter = prometheus(l)
      l.post('ship', 1)
      await clock.run()
      expect(exporter.registry).toBe(register)
      expect(value(await register.metrics(), 'flowing_processed_total', { loop: 'default', type: 'ship' })).toBe(1)
      exporter.unregister()
      expect(register.getSingleMetric('flowing_processed_total')).toBeUndefined()
    })

    it('refuses the same loop twice, and a second loop with the same loop label, with a typed error', () => {
      const registry = new Registry()
      const first = loop().loop
      const exporter = prometheus(first, { registry })
      const again = thrown(() => prometheus(first, { registry }))
      expect(again).toBeInstanceOf(MetricsRegisteredError)
      expect(again.message).toMatch(/already exported .* call unregister\(\)/)
      const other = thrown(() => prometheus(loop().loop, { registry }))
      expect(other).toBeInstanceOf(MetricsRegisteredError)
      expect(other.message).toMatch(/Another loop .*labels: \{ loop/)
      exporter.unregister()
      prometheus(first, { registry }).unregister() // free again after unregister()
    })

    it('exports several loops in one registry, told apart by the loop label', async () => {
      const registry = new Registry()
      const a = loop()
      const b = loop()
      const ea = prometheus(a.loop, { registry, labels: { loop: 'orders' } })
      const eb = prometheus(b.loop, { registry, labels: { loop: 'emails' } })
      a.loop.post('ship', 1)
      a.loop.post('ship', 2)
      b.loop.post('ship', 3)
      await a.clock.run()
      await b.clock.run()
      const text = await registry.metrics()
      expect(value(text, 'flowing_processed_total', { loop: 'orders', type: 'ship' })).toBe(2)
      expect(value(text, 'flowing_processed_total', { loop: 'emails', type: 'ship' })).toBe(1)
      expect(value(text, 'flowing_workers', { loop: 'orders' })).toBe(a.loop.metrics().gauges.workers)
      expect(value(text, 'flowing_workers', { loop: 'emails' })).toBe(b.loop.metrics().gauges.workers)
      ea.unregister() // the other loop's series stay
      const after = await registry.metrics()
      expect(value(after, 'flowing_processed_total', { loop: 'orders', type: 'ship' })).toBeUndefined()
      expect(value(after, 'flowing_workers', { loop: 'orders' })).toBeUndefined()
      expect(value(after, 'flowing_processed_total', { loop: 'emails', type: 'ship' })).toBe(1)
      eb.close()
      expect(registry.getMetricsAsArray()).toEqual([])
    })

    it('unregister() removes the listeners and every metric; later work writes nothing', async () => {
      const registry = new Registry()
      const { clock, loop: l } = loop()
      const before = l.events.eventNames().map((e) => [e, l.events.listenerCount(e)])
      const exporter = prometheus(l, { registry, prefix: 'app_' })
      expect(exporter.names.every((n) => n.startsWith('app_'))).toBe(true)
      expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(exporter.names)
      exporter.unregister()
      exporter.unregister() // idempotent
      expect(registry.getMetricsAsArray()).toEqual([])
      expect(await registry.metrics()).toBe('\n')
      expect(l.events.eventNames().map((e) => [e, l.events.listenerCount(e)])).toEqual(before)
      l.post('ship', 1)
      await clock.run()
      expect(registry.getMetricsAsArray()).toEqual([])
    })

    it('refuses a prefix whose names are taken by metrics of its own, and leaves those alone', async () => {
      const registry = new Registry()
      const mine = new Counter({ name: 'p_backlog', help: 'mine', registers: [registry] })
      mine.inc(7)
      const error = thrown(() => prometheus(loop().loop, { registry, prefix: 'p_' }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as InvalidArgumentError).argument).toBe('options.prefix')
      expect(error.message).toContain('`p_backlog` is taken')
      expect(registry.getMetricsAsArray()).toEqual([mine]) // nothing half-registered
      const exporter = prometheus(loop().loop, { registry, prefix: 'q_' })
      exporter.unregister()
      expect(await registry.metrics()).toContain('p_backlog 7')
    })
  })

  describe('options', () => {
    const l = loop().loop
    it.each([
      [{ registy: new Registry() }, 'options.registy', 'did you mean `registry`?'],
      [{ prefx: 'a_' }, 'options.prefx', 'did you mean `prefix`?'],
      [{ bucket: [1] }, 'options.bucket', 'did you mean `buckets`?'],
      [{ prefix: '9lives_' }, 'options.prefix', 'a metric name prefix'],
      [{ prefix: 'my-app_' }, 'options.prefix', 'a metric name prefix'],
      [{ prefix: 7 }, 'options.prefix', 'a metric name prefix'],
      [{ buckets: [] }, 'options.buckets', 'a non-empty array'],
      [{ buckets: [0.1, 0.1] }, 'options.buckets[1]', 'greater than the bucket before it'],
      [{ buckets: [0.5, 0.1] }, 'options.buckets[1]', 'greater than the bucket before it'],
      [{ buckets: [0, 1] }, 'options.buckets[0]', 'a finite positive number'],
      [{ buckets: [1, Number.POSITIVE_INFINITY] }, 'options.buckets[1]', 'a finite positive number'],
      [{ buckets: [Number.NaN] }, 'options.buckets[0]', 'a finite positive number'],
      [{ labels: { type: 'x' } }, 'options.labels.type', 'the exporter sets those'],
      [{ labels: { 'bad-name': 'x' } }, 'options.labels.bad-name', 'a label name'],
      [{ labels: { __x: 'x' } }, 'options.labels.__x', 'not starting with __'],
      [{ labels: { loop: 3 } }, 'options.labels.loop', 'a string'],
      [{ registry: {} }, 'options.registry', 'a prom-client Registry'],
    ])('%j → InvalidArgumentError naming %s', (options, argument, rule) => {
      const error = thrown(() => prometheus(l, options as never))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as InvalidArgumentError).argument).toBe(argument)
      expect(error.message).toContain(rule)
    })

    it('refuses non-object options', () => {
      expect(thrown(() => prometheus(l, 'fast' as never))).toBeInstanceOf(InvalidArgumentError)
    })

    it('a second loop under one prefix must use the same label names and buckets', () => {
      const registry = new Registry()
      const first = prometheus(l, { registry, labels: { loop: 'a', region: 'eu' } })
      const labels = thrown(() => prometheus(loop().loop, { registry, labels: { loop: 'b' } }))
      expect((labels as InvalidArgumentError).argument).toBe('options.labels')
      const buckets = thrown(() =>
        prometheus(loop().loop, { registry, labels: { loop: 'b', region: 'eu' }, buckets: [1, 2] }),
      )
      expect((buckets as InvalidArgumentError).argument).toBe('options.buckets')
      expect(registry.getMetricsAsArray()).toHaveLength(first.names.length) // nothing half-registered
      first.unregister()
    })
  })
})
