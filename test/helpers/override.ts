/**
 * A view of `target` with one member replaced (or hidden, with `undefined`) and every other member
 * forwarded, bound to `target`: for tests that watch or reshape one call of a real adapter
 * (a projector racing an apply, a store without `atHead`) without writing a fake.
 */
export function overriding<T extends object, K extends keyof T>(target: T, key: K, replacement: T[K] | undefined): T {
  return new Proxy(target, {
    get(t, k, receiver) {
      if (k === key) return replacement
      const value: unknown = Reflect.get(t, k, receiver)
      return typeof value === 'function' ? value.bind(t) : value
    },
  })
}
