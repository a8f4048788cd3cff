/**
 * GraphiQL keeps tabs, history and headers in the Storage it is given (localStorage by default). Given this one,
 * nothing outlives the tab: a query may name an app or a device, and staff share machines.
 */
export function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  };
}
