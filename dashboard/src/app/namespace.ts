/** The namespace the list pages show ('' = all), kept for the tab in sessionStorage. */
import { useEffect, useState } from 'preact/hooks';

const KEY = 'mk8s-dashboard-namespace';
const listeners = new Set<(ns: string) => void>();

export function setNamespace(ns: string): void {
  sessionStorage.setItem(KEY, ns);
  for (const l of listeners) l(ns);
}

export function useNamespace(): string {
  const [ns, setNs] = useState(sessionStorage.getItem(KEY) ?? '');
  useEffect(() => { listeners.add(setNs); return () => { listeners.delete(setNs); }; }, []);
  return ns;
}
