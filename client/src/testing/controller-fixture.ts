/**
 * newControllerFixture: sample-controller's fixture as a reusable helper. Seed objects into the
 * FakeClientset and the (fake) informer caches, build a controller, run reconcile(key), then
 * assert on the recorded client actions.
 */
import { RESOURCES, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { silentLogger, type Logger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { ObjectKey, Reconciler, Result } from '../interfaces.js';
import { descriptorOf, FakeClientset, type Action } from './fake-clientset.js';
import { FakeEventRecorder } from './fake-event-recorder.js';
import { FakeInformerFactory } from './fake-informer.js';

/** What a controller under test is built from. */
export interface ControllerContext {
  client: FakeClientset;
  /** Also reachable as informerFactory. */
  informers: FakeInformerFactory;
  informerFactory: FakeInformerFactory;
  logger: Logger;
  clock: FakeClock;
  recorder: FakeEventRecorder;
}

/** A factory taking the context, or a class whose constructor takes deps resolved from it (typed loosely on purpose). */
type Builder<R> = ((ctx: ControllerContext) => R) | (new (deps: never) => R);

export class ControllerFixture {
  readonly clock: FakeClock;
  readonly client: FakeClientset;
  readonly informers: FakeInformerFactory;
  readonly recorder = new FakeEventRecorder();
  readonly logger: Logger;
  /** The context handed to build(); unknown property names resolve to informers (see build). */
  readonly context: ControllerContext;
  private controller: Reconciler | undefined;

  constructor(o: { clock?: FakeClock; logger?: Logger; gracefulDeletion?: boolean } = {}) {
    this.clock = o.clock ?? new FakeClock();
    this.client = new FakeClientset({ clock: this.clock, ...(o.gracefulDeletion ? { gracefulDeletion: true } : {}) });
    this.informers = new FakeInformerFactory(this.client);
    this.logger = o.logger ?? silentLogger();
    const base: ControllerContext = { client: this.client, informers: this.informers, informerFactory: this.informers, logger: this.logger, clock: this.clock, recorder: this.recorder };
    this.context = new Proxy(base, {
      get: (target, prop, recv) => {
        if (typeof prop !== 'string' || prop in target) return Reflect.get(target, prop, recv);
        const r = guessResource(prop);
        return r ? this.informers.informerFor(r) : undefined;
      },
    });
  }

  /**
   * Stores objects (each needs apiVersion and kind) in the fake clientset and in every matching
   * informer cache, without recording actions or calling handlers. Returns the first stored copy
   * (with uid, resourceVersion and creationTimestamp set).
   */
  seed<T>(first: T, ...more: T[]): T {
    const stored = [first, ...more].map((o) => {
      const [s] = this.client.seed(o as KubeObject);
      const r = descriptorOf(s!);
      for (const inf of this.informers.informersOf(r)) if (inf.matches(s!)) inf.seed(s!);
      return s as unknown as T;
    });
    return stored[0]!;
  }

  /**
   * Builds the controller from a class or factory taking the context. Properties the context does
   * not have resolve to fake informers by resource name (`pods`, `replicaSets`, `nodeInformer`),
   * so `f.build(ReplicaSetController)` works for `{ client, replicaSets, pods, logger }` deps.
   */
  build<R>(b: Builder<R>): R {
    const isClass = typeof b === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(b));
    const c = isClass ? new (b as unknown as new (ctx: ControllerContext) => R)(this.context) : (b as (ctx: ControllerContext) => R)(this.context);
    if (c && typeof (c as Partial<Reconciler>).reconcile === 'function') this.controller = c as unknown as Reconciler;
    return c;
  }

  /** Runs the built controller's reconcile(key) and returns the actions recorded by the client since the last clearActions(). */
  async reconcile(key: ObjectKey, o: { signal?: AbortSignal } = {}): Promise<{ result: Result | void; actions: Action[] }> {
    if (!this.controller) throw new Error('build() a Reconciler first');
    const result = await this.controller.reconcile(key, o.signal ?? AbortSignal.timeout(10_000));
    return { result, actions: this.client.actions() };
  }

  /** Shorthand: client actions as 'verb resource[/subresource]' strings. */
  actions(o: { writesOnly?: boolean } = {}): string[] { return this.client.actionStrings(o); }
}

/** Returns a fresh fixture: FakeClientset + FakeInformerFactory (hasSynced = true) + FakeClock + FakeEventRecorder. */
export function newControllerFixture(o: { clock?: FakeClock; logger?: Logger; gracefulDeletion?: boolean } = {}): ControllerFixture {
  return new ControllerFixture(o);
}

function guessResource(prop: string): ResourceDescriptor | undefined {
  const base = prop.replace(/(Informer|Lister|Cache)$/, '').toLowerCase();
  return RESOURCES.find((r) => r.resource === base || r.singular === base || r.kind.toLowerCase() === base || `${r.resource}s` === base);
}
